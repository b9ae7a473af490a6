"""ament_pep257 (docstring conventions) over the package sources."""

import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.mark.linter
@pytest.mark.pep257
def test_pep257():
    main = pytest.importorskip('ament_pep257.main', reason='ament_pep257 not installed').main
    rc = main(argv=[str(ROOT / 'transmission_bridge'), str(ROOT / 'launch')])
    assert rc == 0, 'Found code style errors / warnings'
