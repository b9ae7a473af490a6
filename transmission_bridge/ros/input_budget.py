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

* **Off.** ``InputBudget(drops=False)`` (the nodes' ``drop_on_overload:=false``) wraps
  nothing: a node then behaves as a relay does, queueing what it cannot take yet (and the
  calls behind it). Near the machine's limit (5 kHz on two shared cores) the probe comes
  late whether or not the node itself is behind, so the budget drops where a relay, queueing
  instead, would lose nothing; under a flood it is what answers calls (doc/performance.md).

* **On demand.** A 10 ms timer is not free: on rclpy's EventsExecutor each tick cost the
  process about 0.2 ms of CPU here, as much as a message. Given :meth:`InputBudget.on_demand`
  hooks (the nodes pass their timer's ``reset`` and ``cancel``), the probe stops itself after
  :data:`QUIET_PROBES` on-time probes in a row with the share at its ceiling and this thread
  running less than :data:`WAKE` of the time, and the wrapper starts it again, checking at
  most every :data:`PROBE_PERIOD` (one comparison per message otherwise), once the thread
  runs more than :data:`WAKE` of the time. A queue needs a busy thread, so the probe runs
  whenever it could find one: the share only ever changes while it runs.

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
# Share of wall time this thread runs above which the probe runs (on demand). Under a 10 kHz
# flood the thread ran 35-55 % of the time while its probes came late (doc/reliability.md);
# at 1 kHz the bridge's runs under 10 %.
WAKE = 0.25
QUIET_PROBES = 20         # on-time probes in a row, quiet, before the probe stops (0.2 s)


def share_error(value):
    """Return why ``value`` is not a valid share ('' if it is): a float in (0, 1]."""
    if isinstance(value, bool) or not isinstance(value, float) or not 0.0 < value <= 1.0:
        return f'must be a number in (0, 1], got {value!r}'
    return ''


class InputBudget:
    """Drop input messages beyond the current share of wall time (see the module docstring)."""

    def __init__(self, max_share=DEFAULT_SHARE, burst=DEFAULT_BURST, clock=time.perf_counter,
                 cpu_clock=time.thread_time, drops=True):
        self.drops = drops              # False: wrap() returns the callback as it is
        self._check_at = float('inf')       # next in-band look at the load (probe stopped)
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
        self._quiet = 0
        self._start = self._stop = None     # the probe's timer, when on demand
        self._check_last = self._check_cpu = 0.0

    @property
    def probing(self):
        """Return whether the probe runs (always, unless :meth:`on_demand` stopped it)."""
        return self._check_at == float('inf')

    def on_demand(self, start, stop):
        """Run the probe only under load: ``start()``/``stop()`` resume and stop its timer."""
        self._start, self._stop = start, stop

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
        # A stopped probe left the share at its ceiling, and would have followed a raise.
        self.share = min(getattr(self, 'share', value), value) if self.probing else value

    def wrap(self, callback):
        """
        Return ``callback`` behind the budget: called if admitted, its time charged.

        Admission and charge are written out in the one function, with two clock reads:
        it runs for every message, where each Python call costs about a microsecond. A
        budget made with ``drops=False`` returns ``callback`` itself: every message is
        handled, however far behind the node falls.
        """
        if not self.drops:
            return callback
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
            if end >= self._check_at:       # the probe is stopped: is this thread busy?
                self._check(end)
        return budgeted

    def _check(self, now):
        """Start the probe if this thread ran over :data:`WAKE` of the time since the last look."""
        cpu = self._cpu_clock()
        if cpu - self._check_cpu > WAKE * (now - self._check_last):
            self._check_at = float('inf')
            # The timer's first tick is judged from now: one period from its reset.
            self._probe_last, self._probe_cpu, self._quiet = now, cpu, 0
            self._start()
        else:
            self._look_again(now, cpu)

    def _look_again(self, now, cpu):
        """Have the wrapper check this thread's load one period from ``now`` (probe stopped)."""
        self._check_last, self._check_cpu = now, cpu
        self._check_at = now + PROBE_PERIOD

    def probe(self):
        """Adjust the share to how late this call is (call every :data:`PROBE_PERIOD`)."""
        if not self.probing:        # a tick queued before the timer was stopped
            return
        now, cpu = self._clock(), self._cpu_clock()
        if self._probe_last is not None:
            interval = now - self._probe_last
            late = interval - PROBE_PERIOD
            if late <= LATE:
                self.share = min(self._max_share, self.share + STEP)
                self._was_late = False
                quiet = (self.share == self._max_share
                         and cpu - self._probe_cpu <= WAKE * interval)
                self._quiet = self._quiet + 1 if quiet else 0
                if self._quiet >= QUIET_PROBES and self._stop is not None:
                    self._stop()
                    self._probe_last = None
                    self._look_again(now, cpu)
                    return
            elif self._was_late or cpu - self._probe_cpu > BUSY * interval:
                self._quiet = 0
                self.share = max(MIN_SHARE, self.share * min(0.5, 5 * PROBE_PERIOD / late))
            else:
                self._quiet = 0
                self.share = max(MIN_SHARE, 0.75 * self.share)
                self._was_late = True
        self._probe_last, self._probe_cpu = now, cpu
