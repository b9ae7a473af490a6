"""Shared behaviour of the command-line tools: one-line errors, exit codes, progress."""

import sys
import time


def fail(prog, message, code=1):
    """Print ``prog: error: message`` to stderr and return ``code``."""
    print(f'{prog}: error: {message}', file=sys.stderr)
    return code


class Progress:
    """A progress line on stderr, drawn only when stderr is a terminal (or forced)."""

    def __init__(self, enabled=None):
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._last = 0.0

    def __call__(self, what, done, total):
        """Show ``what`` at ``done`` of ``total`` (at most ten times a second)."""
        if not self.enabled or time.monotonic() - self._last < 0.1:
            return
        self._last = time.monotonic()
        width = 30
        frac = min(1.0, done / total) if total else 0.0
        bar = '#' * int(frac * width)
        sys.stderr.write(f'\r{what:8s} [{bar:<{width}}] {done:,}/{total:,}')
        sys.stderr.flush()

    def done(self):
        """End the progress line."""
        if self.enabled:
            sys.stderr.write('\n')
