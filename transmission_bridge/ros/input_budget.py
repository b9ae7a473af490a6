"""
Overload protection: the share of wall time a node spends on input, lowered when it falls behind.

Why: rclpy's EventsExecutor runs callbacks in arrival order. When messages come in faster
than a node handles them (a 10 kHz burst into a bridge that handles about 1.2 kHz), every
message becomes a queued event, the queue grows without bound, and a parameter or service
call waits behind all of it: seconds, in ``make stress``. Dropping a message costs only its
take (the nodes subscribe raw and decode only what they handle), so a node that drops what
exceeds a budget drains the queue and answers calls promptly.

How:

* **Credit.** A credit in seconds: wall time refills it at ``share`` seconds per second, up
  to ``burst``; each handled message costs the time it took. A message that finds the credit
  spent is dropped and counted (:attr:`InputBudget.dropped`). The credit never falls below
  ``-burst``, so one slow message costs at most ``burst / share`` of dropping.
* **Probe.** :meth:`InputBudget.probe` runs from a steady-clock timer every
  :data:`PROBE_PERIOD` on the same executor; it comes late by about as long as callbacks
  are queueing. On time, the share grows by :data:`STEP` back up to ``max_share``. Late by
  more than :data:`LATE`, it is halved (or cut in proportion to how late the probe was, when
  that is worse) if the probe was late the time before too, or if this thread ran for more
  than :data:`BUSY` of the interval: both mean a queue. Late once with the thread mostly
  idle is what a pause of the whole process (a VM stall) looks like: the share only
  shrinks to 3/4, so a node that keeps up is not starved by a stall.

With ``share = 1`` and on-time probes nothing is ever dropped: handling can never take
more wall time than passes. So a node that keeps up never drops a message.

No rclpy here: the nodes wrap their input callbacks with :meth:`InputBudget.wrap` and
call :meth:`InputBudget.probe` from a timer.

>>> t = [0]                              # a clock in ms, for round numbers
>>> budget = InputBudget(0.5, burst=10, clock=lambda: t[0])
>>> handle = budget.wrap(lambda msg: t.__setitem__(0, t[0] + 4))   # 4 ms per message
>>> for _ in range(10):                 # back to back: 4 ms each, 2 ms refilled each
...     handle('m')
>>> budget.dropped                      # 10 ms of credit lasted 5 messages
5
>>> t[0] += 100                         # idle: the credit refills (up to the burst)
>>> handle('m'); budget.dropped
5
"""

import time

DEFAULT_SHARE = 1.0
DEFAULT_BURST = 0.02      # s of credit: absorbs two sources arriving at once, or a short stall
PROBE_PERIOD = 0.01       # s between probes (steady clock)
# s: a probe later than this means the executor is behind. It bounds the queued input a
# parameter or service call waits behind (20 ms left make stress's call tail well above an
# idle bridge's; figures in doc/reliability.md).
LATE = 0.005
STEP = 0.025              # share regained per on-time probe (all of it in 0.4 s)
BUSY = 0.9                # share of the interval this thread ran: the executor was busy
MIN_SHARE = 0.02


def share_error(value):
    """Return why ``value`` is not a valid share ('' if it is): a float in (0, 1]."""
    if isinstance(value, bool) or not isinstance(value, float) or not 0.0 < value <= 1.0:
        return f'must be a number in (0, 1], got {value!r}'
    return ''


class InputBudget:
    """Drop input messages beyond the current share of wall time (see the module docstring)."""

    def __init__(self, max_share=DEFAULT_SHARE, burst=DEFAULT_BURST, clock=time.perf_counter,
                 cpu_clock=time.thread_time):
        self.max_share = max_share      # validated: raises ValueError when invalid
        self.share = max_share
        self.dropped = 0
        self._burst = burst
        self._clock = clock
        self._cpu_clock = cpu_clock
        self._probe_cpu = None
        self._credit = burst
        self._last = clock()
        self._probe_last = None
        self._was_late = False

    @property
    def max_share(self):
        """Return the largest share (the ``input_time_share`` parameter)."""
        return self._max_share

    @max_share.setter
    def max_share(self, value):
        reason = share_error(value)
        if reason:
            raise ValueError(f'share {reason}')
        self._max_share = value
        self.share = min(getattr(self, 'share', value), value)

    def wrap(self, callback):
        """
        Return ``callback`` behind the budget: called if admitted, its time charged.

        Admission and charge are written out in the one function, with two clock reads:
        it runs for every message, where each Python call costs about a microsecond.
        """
        clock, burst = self._clock, self._burst

        def budgeted(*args):
            start = clock()
            credit = self._credit + self.share * (start - self._last)
            if credit > burst:
                credit = burst
            if credit <= 0.0:
                self._credit, self._last = credit, start
                self.dropped += 1
                return
            callback(*args)
            end = clock()
            # Refilled at the share while handling, spent at 1: a net (1 - share) per
            # second, never a gain (share <= 1), so only the floor applies.
            credit += (self.share - 1.0) * (end - start)
            self._credit, self._last = (credit if credit > -burst else -burst), end
        return budgeted

    def probe(self):
        """Adjust the share to how late this call is (call every :data:`PROBE_PERIOD`)."""
        now, cpu = self._clock(), self._cpu_clock()
        if self._probe_last is not None:
            interval = now - self._probe_last
            late = interval - PROBE_PERIOD
            if late <= LATE:
                self.share = min(self._max_share, self.share + STEP)
                self._was_late = False
            elif self._was_late or cpu - self._probe_cpu > BUSY * interval:
                self.share = max(MIN_SHARE, self.share * min(0.5, 5 * PROBE_PERIOD / late))
            else:
                self.share = max(MIN_SHARE, 0.75 * self.share)
                self._was_late = True
        self._probe_last, self._probe_cpu = now, cpu
