"""Shared behaviour of the command-line tools: one-line errors, exit codes, progress."""

import importlib
import sys
import time

# Optional dependencies of the tools (not rosdep keys): module -> how to get it.
ROSBAGS = ('rosbags', 'pip install rosbags')
MATPLOTLIB = ('matplotlib', 'pip install matplotlib, or sudo apt install python3-matplotlib')


def fail(prog, message, code=1):
    """Print ``prog: error: message`` to stderr and return ``code``."""
    print(f'{prog}: error: {message}', file=sys.stderr)
    return code


class Failure(Exception):
    """One line for the user: what is wrong, and nothing was written."""


def run(prog, body, args):
    """Return ``body(args)``'s exit code; a :class:`Failure` or Ctrl-C as one line."""
    try:
        return body(args)
    except Failure as exc:
        return fail(prog, str(exc))
    except KeyboardInterrupt:
        return fail(prog, 'interrupted; nothing written', 130)


def missing_dependency(*needed):
    """
    Return a one-line error for the first of ``needed`` that cannot be imported, else ''.

    Each item is ``(module, how to install it)``. Tools call this before they read or
    write anything, so a missing library never leaves half an output behind.
    """
    for module, install in needed:
        try:
            importlib.import_module(module)
        except ImportError:
            return f'this needs the Python package {module!r}, which is not installed ({install})'
    return ''


def add_engine_arguments(group):
    """Add ``--workers N | --scheduler ADDRESS`` (where Dask runs) to an argparse group."""
    where = group.add_mutually_exclusive_group()
    where.add_argument('--workers', type=int, help='embedded cluster size (default: cores)')
    where.add_argument('--scheduler', metavar='ADDRESS',
                       help='an existing Dask cluster, e.g. tcp://10.0.0.5:8786')


class Progress:
    """A progress line on stderr, drawn only when stderr is a terminal (or forced)."""

    def __init__(self, enabled=None):
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self._last = 0.0

    def __call__(self, what, done, total):
        """Show ``what`` at ``done`` of ``total`` (at most ten times a second)."""
        if not self.enabled or (done < total and time.monotonic() - self._last < 0.1):
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
