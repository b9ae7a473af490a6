"""
The one command deadline (mapping/deadline.py) and the owners' split (mapping/ownership.py).

Times are integers (ns) chosen by hand; each expectation is what the module docstring's
table says, for joints commanded at different times.
"""

import numpy as np
import pytest

from transmission_bridge.mapping.deadline import CommandDeadline
from transmission_bridge.mapping.ownership import Ownership
from transmission_bridge.transmissions import load_transmissions

ARM = load_transmissions('config/example_robot_transmissions.yaml')
JOINTS = ARM.joint_names        # shoulder_pan, shoulder_lift, elbow, wrist_pitch, ...
T = 100                         # the timeout, ns


def _deadline(mode='hold'):
    d = CommandDeadline(T, mode)
    d.configure(JOINTS)
    return d


def _idx(*names):
    return np.array([ARM.joint_index[n] for n in names], dtype=np.intp)


def test_each_joint_times_out_on_its_own_deadline():
    d = _deadline()
    d.commanded(_idx('elbow'), 0)
    d.commanded(_idx('wrist_pitch', 'wrist_roll'), 60)
    assert d.expired(99) is None
    assert np.flatnonzero(d.expired(100)).tolist() == _idx('elbow').tolist()
    tripped, due = d.poll(100)
    assert tripped.tolist() == due.tolist() == _idx('elbow').tolist()
    d.commanded(_idx('wrist_pitch', 'wrist_roll'), 150)     # the wrist's stream goes on
    tripped, due = d.poll(200)
    assert tripped.tolist() == [] and due.tolist() == _idx('elbow').tolist()    # repeated
    assert d.tripped_names == ('elbow',)
    assert d.timed_out_since_ns() == 100


def test_a_command_ends_only_its_joints_timeout_once():
    d = _deadline()
    d.commanded(_idx('elbow', 'wrist_pitch'), 0)
    d.poll(100)
    assert d.commanded(_idx('elbow'), 120).tolist() == _idx('elbow').tolist()
    assert d.commanded(_idx('elbow'), 130).tolist() == []          # said once
    assert d.tripped_names == ('wrist_pitch',)


def test_never_commanded_joints_and_goal_joints_never_time_out():
    d = _deadline()
    assert d.expired(10**12) is None and [x.tolist() for x in d.poll(10**12)] == [[], []]
    d.commanded(_idx('elbow', 'wrist_pitch'), 0)
    d.forget(_idx('elbow'))                       # a goal took the elbow
    assert np.flatnonzero(d.expired(10**6)).tolist() == _idx('wrist_pitch').tolist()
    assert d.streamed().tolist() == _idx('wrist_pitch').tolist()


def test_a_timeout_of_zero_is_off_and_a_new_timeout_judges_anew():
    d = _deadline()
    d.commanded(_idx('elbow'), 0)
    d.poll(100)
    d.set_timeout(0)
    assert d.expired(10**9) is None and d.tripped_names == ()
    d.set_timeout(500)
    assert d.expired(499) is None and d.expired(500) is not None


def test_the_earliest_deadline_is_found_again_after_later_commands():
    # A command moves a deadline later: the cached bound may be early, never late.
    d = _deadline()
    d.commanded(_idx('elbow'), 0)
    d.commanded(_idx('wrist_pitch'), 50)
    for t in range(10, 1000, 10):                 # the elbow streams, the wrist stopped
        d.commanded(_idx('elbow'), t)
        expired = d.expired(t)
        assert (expired is not None) == (t >= 150), t
        if expired is not None:
            assert np.flatnonzero(expired).tolist() == _idx('wrist_pitch').tolist()


@pytest.mark.parametrize('mode, fields', [
    ('hold', (True, True, True)), ('zero_velocity', (False, True, False)),
    ('zero_effort', (False, False, True)), ('none', None)])
def test_the_plain_safe_command_by_mode(mode, fields):
    d = _deadline(mode)
    commands = d.safe_commands(('m1', 'm2', 'm3'), [1.5, np.nan, -2.0])
    if fields is None:
        assert commands == []
        return
    if mode != 'hold':
        [(names, *values)] = commands
        assert names == ('m1', 'm2', 'm3')
        assert [v is not None for v in values] == list(fields)
        assert all(v.tolist() == [0.0] * 3 for v in values if v is not None)
        return
    (known, *held), (unknown, *rest) = commands     # a motor not measured: no position
    assert known == ('m1', 'm3') and held[0].tolist() == [1.5, -2.0]
    assert held[1].tolist() == held[2].tolist() == [0.0, 0.0]
    assert unknown == ('m2',) and rest[0] is None and rest[1].tolist() == [0.0]


def test_a_bad_mode_is_refused_with_the_choices():
    with pytest.raises(ValueError, match='one of hold, zero_velocity, zero_effort, none, got '
                                         "'brake'"):
        CommandDeadline(T, 'brake')


class _Owner:

    def __init__(self, stream):
        self.stream = stream

    def take(self, joints, position, velocity, effort, now_ns):
        return ''


def test_the_split_gives_each_owner_its_columns_and_a_goal_outranks_a_spring():
    owners = Ownership()
    owners.configure(ARM)
    spring, goal = _Owner(True), _Owner(False)
    owners.set_springs(_idx('wrist_pitch', 'wrist_roll', 'elbow'), spring)
    names = ('foo', 'elbow', 'wrist_roll', 'shoulder_pan')
    split = owners.split(names)
    assert split.plain.tolist() == [0, 3]             # unknown names stay with the plain map
    [(who, cols, joints, reach)] = split.owned
    assert who is spring and cols.tolist() == [1, 2]
    assert joints.tolist() == _idx('elbow', 'wrist_roll').tolist()
    assert reach.tolist() == sorted(_idx('elbow', 'wrist_pitch', 'wrist_roll').tolist())
    assert owners.split(names) is split               # cached while the owners are
    owners.set_goal(_idx('wrist_pitch', 'wrist_roll'), goal)
    split = owners.split(names)
    owned = [(o is goal, c.tolist()) for o, c, _, _ in split.owned]
    assert owned == [(False, [1]), (True, [2])]
    owners.clear_goal(goal)
    assert [o for o, *_ in owners.split(names).owned] == [spring]
    owners.set_springs([], spring)
    assert not owners.any and owners.split(names).owned == ()
