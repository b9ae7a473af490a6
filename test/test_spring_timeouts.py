"""
Joint springs per transmission (control/impedance.py): measured, timed out, held, resumed.

The core runs on the example arm (a 1:n elbow, a differential wrist) with the one command
deadline (mapping/deadline.py). Expected motor torques are Jᵀ τ_j of the joint law computed
here: q from the set's position map, J by central differences of it (never the core's).
"""

import numpy as np
import pytest

from transmission_bridge.control.impedance import ImpedanceCore
from transmission_bridge.mapping.deadline import CommandDeadline
from transmission_bridge.transmissions import load_transmissions
from transmission_bridge.transmissions.parameters import apply_parameters
from transmission_oracles import fd_jacobian

# Ideal gear stages (the motors' friction off): the timeouts are this file's subject; the law
# through lossy stages is test_impedance.py's and test_losses_node.py's.
ARM = apply_parameters(load_transmissions('config/example_robot_transmissions.yaml'),
                       {'actuators.elbow_motor.friction.viscous': 0.0,
                        'actuators.elbow_motor.friction.coulomb': 0.0,
                        'actuators.shoulder_pan_motor.friction.viscous': 0.0,
                        'actuators.shoulder_pan_motor.friction.coulomb': 0.0,
                        'actuators.shoulder_lift_motor.friction.viscous': 0.0,
                        'actuators.shoulder_lift_motor.friction.coulomb': 0.0})
assert ARM.losses.lossless
T = 100                 # ns: command_timeout
FD_TOL = 1e-6
EXACT = 1e-9
ELBOW, WRIST = ['elbow'], ['wrist_pitch', 'wrist_roll']
KP = {'elbow': 30.0, 'wrist_pitch': 10.0, 'wrist_roll': 6.0}
KD = {'elbow': 1.0, 'wrist_pitch': 0.5, 'wrist_roll': 0.2}


def _idx(names):
    return np.array([ARM.joint_index[n] for n in names], dtype=np.intp)


def _core(mode, output='effort'):
    deadline = CommandDeadline(T, mode)
    deadline.configure(ARM.joint_names)
    core = ImpedanceCore(ARM, output, deadline)
    for j in ELBOW + WRIST:
        core.set_gain(j, 'p', KP[j])
        core.set_gain(j, 'd', KD[j])
    return core, deadline


def _state(theta, thetad):
    """Return (flat, joint state (3, nJ)) of the motors at (θ, θ̇), as the state side has them."""
    flat = np.concatenate([theta, thetad, np.zeros(len(theta)), [1.0]])
    return flat, ARM.state_map()(flat)


def _law(q_target, theta, thetad, names, damping_loss=True):
    """Jᵀ τ_j of the joint law at (θ, θ̇) for joints ``names``, targets q* (q̇* = τ* = 0)."""
    J = fd_jacobian(ARM, theta)
    q, qd = ARM.actuator_to_joint('position', theta), J @ thetad
    tau = np.zeros(ARM.num_joints)
    b = np.array([ARM.joint(j).damping for j in ARM.joint_names])
    for j in names:
        i = ARM.joint_index[j]
        loss = b[i] * qd[i] if damping_loss else 0.0
        tau[i] = KP[j] * (q_target[i] - q[i]) - KD[j] * qd[i] + loss
    return J.T @ tau


def _send(core, block, flat, state):
    """Fill the block's command as the node does; return {motor: effort}."""
    out = np.zeros(len(block.names))
    assert core.fill(block, flat, state, None, out)
    return dict(zip(block.names, out))


def _take(core, deadline, names, q_target, now):
    joints = _idx(names)
    assert core.take(joints, q_target[joints], np.zeros(len(joints)), np.zeros(len(joints)),
                     now) == ''
    deadline.commanded(joints, now)


def _pose(shift=0.0):
    q = ARM.default_positions + shift
    return q, ARM.joint_to_actuator('position', q)


def test_a_transmission_the_state_did_not_measure_gets_nothing_the_others_theirs():
    core, deadline = _core('hold')
    q, theta = _pose()
    thetad = np.linspace(0.5, -0.5, ARM.num_actuators)
    target = q + 0.1
    _take(core, deadline, ELBOW + WRIST, target, 0)
    flat, state = _state(theta, thetad)
    kept = np.setdiff1d(np.arange(ARM.num_joints), _idx(WRIST))     # the wrist stale
    block = core.block_at(kept, 10, state)
    assert block.names == ('elbow_motor',)
    want = _law(target, theta, thetad, ELBOW)
    assert _send(core, block, flat, state)['elbow_motor'] == pytest.approx(
        want[ARM.actuator_index['elbow_motor']], rel=FD_TOL, abs=EXACT)
    block = core.block_at(None, 20, state)                # heard again: both
    assert set(block.names) == {'elbow_motor', 'wrist_left_motor', 'wrist_right_motor'}


def test_zero_effort_zeroes_only_the_timed_out_transmission():
    core, deadline = _core('zero_effort')
    q, theta = _pose()
    thetad = np.full(ARM.num_actuators, 0.3)
    target = q - 0.05
    _take(core, deadline, ELBOW, target, 0)
    _take(core, deadline, WRIST, target, 60)
    flat, state = _state(theta, thetad)
    block = core.block_at(None, 120, state)               # the elbow's 100 ns passed
    assert block.names == ('wrist_left_motor', 'wrist_right_motor', 'elbow_motor')
    got = _send(core, block, flat, state)
    want = _law(target, theta, thetad, WRIST)
    assert got['elbow_motor'] == 0.0
    for m in ('wrist_left_motor', 'wrist_right_motor'):
        assert got[m] == pytest.approx(want[ARM.actuator_index[m]], rel=FD_TOL, abs=EXACT)


@pytest.mark.parametrize('output', ['effort', 'motor_gains'])
def test_hold_latches_the_pose_measured_then_and_new_targets_take_over(output):
    core, deadline = _core('hold', output)
    q, theta = _pose()
    thetad = np.full(ARM.num_actuators, -0.2)
    target = q + 0.2
    _take(core, deadline, ELBOW + WRIST, target, 0)
    flat, state = _state(theta, thetad)
    held = core.block_at(None, 150, state)                # timed out: latched here
    latched = ARM.actuator_to_joint('position', theta)
    _, moved = _pose(0.03)                                # the motors move on
    flat2, state2 = _state(moved, thetad)
    block = core.block_at(None, 160, state2)
    assert block is held
    if output == 'effort':
        got = _send(core, block, flat2, state2)
        want = _law(latched, moved, thetad, ELBOW + WRIST)      # not re-latched at `moved`
        for m, v in got.items():
            assert v == pytest.approx(want[ARM.actuator_index[m]], rel=FD_TOL, abs=1e-6)
    else:
        out = np.zeros((len(block.names), 5))
        assert core.fill(block, flat2, state2, None, out)
        for m, row in zip(block.names, out):
            assert row[0] == pytest.approx(theta[ARM.actuator_index[m]], abs=EXACT)  # θ*
            assert row[1] == 0.0                                                    # θ̇*
    _take(core, deadline, ELBOW + WRIST, target, 170)     # resumed: the targets again
    block = core.block_at(None, 180, state2)
    got = _send(core, block, flat2, state2) if output == 'effort' else None
    if got is not None:
        want = _law(target, moved, thetad, ELBOW + WRIST)
        for m, v in got.items():
            assert v == pytest.approx(want[ARM.actuator_index[m]], rel=FD_TOL, abs=1e-6)


def test_none_keeps_the_last_targets_and_a_stop_times_out_everything():
    core, deadline = _core('none')
    q, theta = _pose()
    thetad = np.zeros(ARM.num_actuators)
    target = q + 0.1
    _take(core, deadline, ELBOW, target, 0)
    flat, state = _state(theta, thetad)
    block = core.block_at(None, 500, state)                # timed out, none: targets kept
    got = _send(core, block, flat, state)
    want = _law(target, theta, thetad, ELBOW)
    assert got['elbow_motor'] == pytest.approx(want[ARM.actuator_index['elbow_motor']],
                                               rel=FD_TOL)
    deadline.mode = 'hold'
    core, deadline = _core('hold')
    _take(core, deadline, ELBOW, target, 0)
    block = core.block_at(None, 10, state, timed_out=True)     # the bridge stops: hold
    assert _send(core, block, flat, state)['elbow_motor'] == pytest.approx(0.0, abs=1e-9)


def test_without_targets_nothing_and_without_gains_no_block():
    core, deadline = _core('hold')
    q, theta = _pose()
    _, state = _state(theta, np.zeros(ARM.num_actuators))
    assert core.block_at(None, 0, state) is None           # gains, no targets yet
    for j in ELBOW + WRIST:
        core.set_gain(j, 'p', 0.0)
        core.set_gain(j, 'd', 0.0)
    assert core.block_at(None, 0, state) is None and not len(core.joints)
