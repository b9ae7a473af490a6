"""Shared test set-up: seeded hypothesis, named tolerances, ROS isolation helpers."""

import os
import pathlib

import hypothesis

# Every generated case is reproducible: hypothesis derives examples from the test itself.
hypothesis.settings.register_profile(
    'seeded', derandomize=True, deadline=None, max_examples=200,
    suppress_health_check=[hypothesis.HealthCheck.too_slow])
hypothesis.settings.load_profile(os.environ.get('HYPOTHESIS_PROFILE', 'seeded'))

REPO = pathlib.Path(__file__).resolve().parent.parent
CONFIG = REPO / 'config'


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Print how many generated cases each fuzz target ran (test_fuzz.py)."""
    cases = getattr(config, '_fuzz_cases', None)
    if cases:
        terminalreporter.write_line('generated cases per fuzz target: ' + ', '.join(
            f'{name} {count}' for name, count in sorted(cases.items())))
