"""
Signals of a recording made fit for the regressor: uniform, low-passed, differentiated.

Recorded stamps jitter, and a regressor needs accelerations nobody measured. So:

* :func:`uniform`: the samples linearly interpolated onto a uniform grid at the recording's
  median rate (a gap longer than ``max_gap`` seconds splits the recording into segments);
* :func:`low_pass`: a zero-phase FIR low-pass (a windowed sinc, Blackman window, cut-off
  ``cutoff`` Hz, transition about ``2.5 / duration of the kernel``), applied as a centred
  convolution, so nothing is delayed; the first and last kernel half-widths of each
  segment, where the kernel would run off the data, are dropped;
* :func:`derivative`: central differences of the filtered signal (second order).

The filter has no phase, so the motion keeps the time of the torques it is fitted to
(the torques themselves are not filtered: :mod:`.data`). Default cut-off 10 Hz: an
excitation's content is below 2 Hz, a motor's current loop far above.
"""

import numpy as np

DEFAULT_CUTOFF = 10.0       # Hz
TAPS_PER_CUTOFF = 4.0       # kernel half-width: this many periods of the cut-off


def uniform(stamps, values, max_gap=0.1):
    """
    Return ``(dt, [(t, values), ...])``: ``values`` (N, ...) resampled at a uniform step.

    The step is the median of the stamps' differences; a gap longer than ``max_gap`` s
    starts a new segment. Rows with a NaN are dropped first.
    """
    t = np.asarray(stamps, dtype=float)
    x = np.asarray(values, dtype=float)
    keep = np.isfinite(x.reshape(len(x), -1)).all(axis=1) & np.isfinite(t)
    t, x = t[keep], x[keep]
    order = np.argsort(t, kind='stable')
    t, x = t[order], x[order]
    if len(t) < 2:
        return None, []
    steps = np.diff(t)
    dt = float(np.median(steps[steps > 0])) if (steps > 0).any() else None
    if not dt:
        return None, []
    cuts = np.flatnonzero(steps > max(max_gap, 3 * dt)) + 1
    segments = []
    for part_t, part_x in zip(np.split(t, cuts), np.split(x, cuts)):
        if len(part_t) < 2:
            continue
        grid = part_t[0] + dt * np.arange(int(np.floor((part_t[-1] - part_t[0]) / dt)) + 1)
        flat = part_x.reshape(len(part_t), -1)
        out = np.stack([np.interp(grid, part_t, col) for col in flat.T], axis=1)
        segments.append((grid, out.reshape((len(grid),) + part_x.shape[1:])))
    return dt, segments


def kernel(dt, cutoff=DEFAULT_CUTOFF):
    """Return the taps of the zero-phase low-pass (odd length, unit DC gain) at step ``dt``."""
    half = max(1, int(np.ceil(TAPS_PER_CUTOFF / (cutoff * dt))))
    k = np.arange(-half, half + 1)
    taps = np.sinc(2.0 * cutoff * dt * k) * np.blackman(2 * half + 1)
    return taps / taps.sum()


def low_pass(x, dt, cutoff=DEFAULT_CUTOFF):
    """
    Return ``x`` (N, ...) low-passed along axis 0, the kernel's half-width dropped each end.

    Empty when the segment is shorter than the kernel. The convolution runs through the FFT
    (the kernel spans hundreds of samples at 1 kHz): the same numbers as a direct one, to
    rounding.
    """
    taps = kernel(dt, cutoff)
    x = np.asarray(x, dtype=float)
    if len(x) < len(taps):
        return x[:0]
    flat = x.reshape(len(x), -1)
    size = 1 << int(np.ceil(np.log2(len(flat) + len(taps) - 1)))
    spectrum = np.fft.rfft(flat, size, axis=0) * np.fft.rfft(taps, size)[:, None]
    full = np.fft.irfft(spectrum, size, axis=0)
    out = full[len(taps) - 1:len(flat)]             # 'valid': the kernel wholly inside
    return out.reshape((len(out),) + x.shape[1:])


def trim(x, dt, cutoff=DEFAULT_CUTOFF):
    """Return ``x`` without the samples :func:`low_pass` drops at each end."""
    half = len(kernel(dt, cutoff)) // 2
    return x[half:len(x) - half]


def derivative(x, dt):
    """Return d``x``/dt along axis 0 (central differences; one-sided at the ends)."""
    return np.gradient(np.asarray(x, dtype=float), dt, axis=0)
