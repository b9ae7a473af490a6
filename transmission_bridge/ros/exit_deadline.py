"""
A deadline for a stopping process: past it, print one line and exit, even if the GIL is held.

A call stuck in C++ that holds the GIL (Fast DDS's participant teardown, see
``node_main.TEARDOWN_TIMEOUT_S``) stops every Python thread, so a Python watchdog could never
run. On Linux the deadline is two POSIX timers that start a C thread each (SIGEV_THREAD):
the first calls ``perror(message)``, the second ``_exit(code)``. Both functions take the
one argument a timer passes, so no Python code runs when they fire. Elsewhere, or if the
timers cannot be made, faulthandler's C watchdog exits instead (code 1, no message).
"""

import contextlib
import ctypes
import faulthandler
import os
import sys

_SIGEV_THREAD = 2
_CLOCK_MONOTONIC = 1
# The exit follows the message by this much, s, so the message is out first.
_MESSAGE_LEAD_S = 0.05


class _SigevThread(ctypes.Structure):
    _fields_ = [('function', ctypes.c_void_p), ('attributes', ctypes.c_void_p)]


class _SigevFields(ctypes.Union):
    _fields_ = [('pad', ctypes.c_int * 12), ('thread', _SigevThread)]


class _Sigevent(ctypes.Structure):
    # struct sigevent (Linux): union sigval, signo, notify, then the notify-specific union.
    _fields_ = [('value', ctypes.c_void_p), ('signo', ctypes.c_int), ('notify', ctypes.c_int),
                ('fields', _SigevFields)]


class _Timespec(ctypes.Structure):
    _fields_ = [('sec', ctypes.c_long), ('nsec', ctypes.c_long)]


class _Itimerspec(ctypes.Structure):
    _fields_ = [('interval', _Timespec), ('value', _Timespec)]


def _timespec(seconds):
    whole = int(seconds)
    return _Timespec(whole, int(round((seconds - whole) * 1e9)))


class _Timers:
    """One-shot POSIX timers, each calling a C function with one argument in its own thread."""

    def __init__(self):
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._ids = []

    def call_later(self, seconds, function, argument):
        """Call ``function(argument)`` in a C thread after ``seconds``; raise OSError if not."""
        libc = self._libc
        event = _Sigevent()
        event.value = argument
        event.notify = _SIGEV_THREAD
        event.fields.thread.function = ctypes.cast(function, ctypes.c_void_p).value
        timer = ctypes.c_void_p()
        if libc.timer_create(_CLOCK_MONOTONIC, ctypes.byref(event), ctypes.byref(timer)):
            raise OSError(ctypes.get_errno(), 'timer_create failed')
        self._ids.append(timer)
        spec = _Itimerspec(value=_timespec(seconds))
        if libc.timer_settime(timer, 0, ctypes.byref(spec), None):
            raise OSError(ctypes.get_errno(), 'timer_settime failed')

    def cancel(self):
        """Delete every timer not fired yet (a timer deleted in time never calls)."""
        while self._ids:
            self._libc.timer_delete(self._ids.pop())


@contextlib.contextmanager
def exit_deadline(seconds, code, message):
    """
    Run the ``with`` body; if it has not finished after ``seconds``, end the process.

    The process then writes ``message`` to stderr (through ``perror``, which appends
    ``': '`` and the C library's last error text) and exits with ``code`` at once, without
    running Python's finalizers. A body that finishes in time changes nothing.
    """
    timers = None
    keep = ctypes.create_string_buffer(message.encode())   # alive until the timers are gone
    if sys.platform.startswith('linux'):
        try:
            timers = _Timers()
            timers.call_later(seconds, timers._libc.perror, ctypes.addressof(keep))
            timers.call_later(seconds + _MESSAGE_LEAD_S, timers._libc._exit, int(code))
        except (AttributeError, OSError):
            if timers is not None:
                timers.cancel()
            timers = None
    if timers is None:
        with open(os.devnull, 'w') as sink:
            faulthandler.dump_traceback_later(seconds, exit=True, file=sink)
            try:
                yield
            finally:
                faulthandler.cancel_dump_traceback_later()
        return
    try:
        yield
    finally:
        timers.cancel()
