"""Every benchmark script starts from a fresh clone (their figures are in the README)."""

import pathlib
import subprocess
import sys

import pytest

BENCH = pathlib.Path(__file__).resolve().parent.parent / 'bench'


@pytest.mark.parametrize('script', sorted(p.name for p in BENCH.glob('bench_*.py')))
def test_bench_script_help(script):
    result = subprocess.run([sys.executable, str(BENCH / script), '--help'], cwd=BENCH,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert 'usage:' in result.stdout
