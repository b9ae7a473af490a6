"""
/tf at most ``publish_frequency`` times a second, counted in the inputs' stamps.

robot_state_publisher's ``publish_frequency`` (default 20 Hz) caps how often its moving
transforms go out, whatever the joint_states rate; this is the same cap, on the stamps rather
than the wall clock, so a replayed bag gives the same /tf at any replay speed. The slots are
``1 / frequency`` apart from the first input: a 1 kHz stream gives exactly 20 a second, not
one per 51 ms. A stamp earlier than the last published (a bag looped, a simulator reset)
starts the slots again; a stamp of 0 (a publisher that does not stamp) is always due.

>>> cap = TfRate(20.0)
>>> [cap.due(ms * 1_000_000) for ms in (1000, 1001, 1049, 1050, 1099, 1100, 1170, 1171)]
[True, False, False, True, False, True, True, False]
>>> cap.due(5_000_000)                      # went back: a new start
True
>>> TfRate(0.0).due(1)                      # no cap
True
"""


class TfRate:
    """The /tf cap: ``due(stamp_ns)`` says whether this input's transforms go out."""

    def __init__(self, frequency):
        self.period_ns = round(1e9 / frequency) if frequency > 0 else 0
        self._next = None                   # the next slot's stamp, ns

    def due(self, stamp_ns):
        """Return True if ``stamp_ns`` opens a slot (and take the slot)."""
        period, slot = self.period_ns, self._next
        if not period or stamp_ns <= 0:
            return True
        if slot is not None and slot - period <= stamp_ns < slot:
            return False
        # The next slot follows this one, or (far behind, or went back) this stamp.
        self._next = slot + period if slot is not None and 0 <= stamp_ns - slot < period \
            else stamp_ns + period
        return True
