"""
Which outputs of the kinematics node one input publishes: :class:`OutputsDue`.

An output goes out when someone reads it (its publisher has a matched reader at that input:
DDS would drop it unread otherwise, so it is not computed), on its ``publish_every.<output>``
count, and, for /tf, at most ``publish_frequency`` times a second (:class:`TfRate`).

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


class _Nobody:
    """The /tf publisher where tf2_msgs is missing: never read."""

    @staticmethod
    def get_subscription_count():
        return 0


class OutputsDue:
    """
    ``due(stamp_ns)``: the outputs (the node's OUTPUTS order, TF last) this input publishes.

    ``every``: publish_every of each output; ``frequency``: publish_frequency; ``readers``:
    the outputs' publishers (tips: a list, any of whose readers counts; TF: None if absent).
    Counting the input is part of the call. The reader count is the publisher's matched
    readers now, ~1 us each, so a reader gets the outputs from the first input after it
    matched, as it would from DDS.
    """

    def __init__(self, every, frequency, readers):
        self.every = list(every)
        self._decimated = any(n != 1 for n in self.every)   # decided when every changes
        self.tf_rate = TfRate(frequency)
        gravity, passive, poses, self._tips, energy, tf = readers
        self._readers = [gravity, passive, poses, energy, tf or _Nobody]     # tips: 4th
        self._count = 0

    def set_every(self, index, every):
        """Publish output ``index`` for every ``every``-th input from now on (0: never)."""
        self.every[index] = every
        self._decimated = any(n != 1 for n in self.every)

    def __call__(self, stamp_ns):
        """Return the due outputs of this input (a list of bools); count it."""
        count, self._count = self._count, self._count + 1
        due = [pub.get_subscription_count() > 0 for pub in self._readers]
        due.insert(3, any(pub.get_subscription_count() > 0 for pub in self._tips))
        if self._decimated:
            due = [d and every > 0 and count % every == 0 for d, every in zip(due, self.every)]
        due[-1] = due[-1] and self.tf_rate.due(stamp_ns)
        return due


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
