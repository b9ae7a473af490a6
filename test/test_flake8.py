"""ament_flake8 with ROS 2's configuration (what `colcon test` runs on a ROS install)."""

import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PATHS = ['transmission_bridge', 'test', 'launch', 'bench', 'examples', 'doc', 'setup.py']


@pytest.mark.flake8
@pytest.mark.linter
def test_flake8():
    main_with_errors = pytest.importorskip(
        'ament_flake8.main', reason='ament_flake8 not installed').main_with_errors
    paths = [str(ROOT / p) for p in PATHS if (ROOT / p).exists()]
    rc, errors = main_with_errors(argv=paths)
    assert rc == 0, f'Found {len(errors)} code style errors / warnings:\n' + '\n'.join(errors)
