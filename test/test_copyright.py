"""ament_copyright, where it is installed (it is not on PyPI, so pip-only set-ups skip it)."""

import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.mark.copyright
@pytest.mark.linter
def test_copyright():
    main = pytest.importorskip('ament_copyright.main', reason='ament_copyright not installed').main
    rc = main(argv=[str(ROOT / 'transmission_bridge'), str(ROOT / 'test')])
    assert rc == 0, 'Found errors'
