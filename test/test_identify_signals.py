"""
The signals a dynamic fit reads: resampling, the zero-phase low-pass and its derivatives.

Oracles: numpy's direct convolution, a sine's own derivatives, a jittered clock.
"""

import numpy as np
import pytest

from transmission_bridge.identification import signals

SEED = 4
DT = 0.001


def test_the_fft_low_pass_is_the_direct_convolution():
    rng = np.random.default_rng(SEED)
    x = rng.normal(size=(7000, 3))
    taps = signals.kernel(DT, 10.0)
    want = np.stack([np.convolve(col, taps, mode='valid') for col in x.T], axis=1)
    got = signals.low_pass(x, DT, 10.0)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    assert taps.sum() == pytest.approx(1.0, abs=1e-15) and np.allclose(taps, taps[::-1])


@pytest.mark.parametrize('frequency', [0.2, 1.0, 3.0])
def test_a_slow_sine_passes_without_delay_and_differentiates(frequency):
    """Zero phase: the filtered sine is the sine at the same times (trimmed), derivatives too."""
    t = np.arange(0.0, 20.0, DT)
    w = 2 * np.pi * frequency
    x = np.sin(w * t)
    filtered = signals.low_pass(x, DT, 10.0)
    kept = signals.trim(t, DT, 10.0)
    assert len(filtered) == len(kept)
    np.testing.assert_allclose(filtered, np.sin(w * kept), atol=2e-3)       # gain ~1
    velocity = signals.derivative(filtered, DT)[1:-1]
    np.testing.assert_allclose(velocity, w * np.cos(w * kept[1:-1]), atol=2e-3 * w)
    acceleration = signals.derivative(signals.derivative(filtered, DT), DT)[2:-2]
    np.testing.assert_allclose(acceleration, -w * w * np.sin(w * kept[2:-2]),
                               atol=2e-3 * w * w)


def test_fast_noise_is_removed():
    rng = np.random.default_rng(SEED)
    noise = rng.normal(size=20000)
    assert np.std(signals.low_pass(noise, DT, 10.0)) < 0.2 * np.std(noise)


def test_jittered_stamps_are_resampled_and_a_gap_splits_the_recording():
    rng = np.random.default_rng(SEED)
    t = np.arange(0.0, 4.0, DT) + rng.uniform(-2e-4, 2e-4, 4000)
    t = np.concatenate([t, 5.0 + np.arange(0.0, 2.0, DT)])      # a second's gap
    x = np.column_stack([np.sin(t), np.cos(t)])
    dt, segments = signals.uniform(t, x)
    assert dt == pytest.approx(DT, rel=0.05) and len(segments) == 2
    for grid, values in segments:
        assert np.allclose(np.diff(grid), dt)
        np.testing.assert_allclose(values[:, 0], np.sin(grid), atol=1e-6)
