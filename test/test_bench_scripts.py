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


def _result(kind, p50, cpu, lost, dropped=0):
    return {'target': 'bridge', 'node': kind, 'rate_hz': 1000.0, 'sent': 100,
            'received': 100 - lost, 'lost': lost, 'dropped': dropped, 'p50_us': p50,
            'p99_us': 2 * p50, 'max_us': 3 * p50, 'stalls': 0, 'max_gap_ms': p50 / 100,
            'cpu_percent': cpu, 'rss_mb': 60.0, 'own_messages': 1 if kind == 'node' else 0}


def test_latency_rounds_take_the_median_of_each_rounds_ratio():
    sys.path.insert(0, str(BENCH))
    try:
        from bench_latency import combine
    finally:
        sys.path.remove(str(BENCH))
    # Three rounds, the second one slow for everyone: each round's ratio is 1.1 to the
    # typed relay, while the ratio of the medians would be 330/300.
    runs = {'raw_relay': [_result('raw_relay', 250, 10, 0), _result('raw_relay', 900, 12, 3),
                          _result('raw_relay', 280, 11, 0)],
            'relay': [_result('relay', 300, 20, 0), _result('relay', 1000, 20, 0),
                      _result('relay', 200, 20, 1)],
            'node': [_result('node', 330, 18, 2, 2), _result('node', 1100, 22, 0, 0),
                     _result('node', 220, 19, 0, -1)]}
    rows = {row['node']: row for row in combine(runs)}
    node = rows['node']
    assert node['p50_us'] == 330
    assert node['p50/relay'] == pytest.approx(1.1, rel=1e-12)
    assert node['p50/raw'] == pytest.approx(1100 / 900, rel=1e-12)  # 1.32, 1.22, 0.79
    assert node['cpu/relay'] == pytest.approx(0.95, rel=1e-12)      # 0.9, 1.1, 0.95
    assert node['lost'] == 2 and node['sent'] == 300 and node['received'] == 298
    assert node['own_messages'] == 3 and rows['relay']['own_messages'] == 0   # summed, apart
    assert node['dropped'] == -1                # one round had no report: not a count
    assert node['max_us'] == 3300
    assert rows['raw_relay']['lost'] == 3 and rows['raw_relay']['dropped'] == 0
    assert rows['relay']['p50/relay'] == 1.0
