"""
Every kernel a bridge's stream calls, compiled before its first message, without ROS.

numba compiles a kernel for each kind of array it is called with, on its first call (or
loads it from its disk cache): :func:`warm_up` makes those first calls at configuration time,
so no state or command waits for a compiler. The routes call it (:meth:`.routes.Routes.
configure`), and so do the install's warm-up (:mod:`transmission_bridge.tools.warm_up`).
"""

import time

import numpy as np

from .commands import CommandMapper
from ..messages.wire import JointStateLayout
from ..transmissions import ConfigError


def warm_up(tset, also=()):
    """
    Compile every linkage and loss kernel a stream of ``tset`` calls; return the seconds.

    numba compiles a kernel for each kind of array it is called with, on its first call (or
    loads it from its disk cache): here, before the first message, not on it. The kinds the
    bridge uses: a state in and a new joint state out (the typed route), into a contiguous
    array (a degraded relay) and into a message template's view (the fast route), a bag's
    rows (the converter), streaming commands and trajectories. ``also``: more first calls
    to make now (the node's goal check), timed with these. A set without linkages and
    without a lossy gear stage compiles nothing (numba is not imported).
    """
    start = time.perf_counter()
    if len(tset.linkage_joints) or not tset.losses.lossless:
        n_act, n = tset.num_actuators, tset.num_joints
        flat = np.zeros(3 * n_act + 1)
        flat[-1] = 1.0
        joint_map = tset.state_map()
        joint_map(flat)
        joint_map(flat, np.empty((3, n)))
        joint_map.writer(JointStateLayout(tset.joint_names, '', (n, n, n)).encoder().state)(
            flat)
        joint_map(np.stack([flat, flat]))
        # Limits off: the kernels are the point, and a robot whose zero pose is beyond its
        # joints' limits (a quadruped's knees) must not stop here.
        zeros, mapper = [0.0] * n, CommandMapper(tset, limit_commands=False)
        mapper.map_command(tset.joint_names, zeros, zeros, zeros)
        try:
            mapper.map_trajectory(tset.joint_names, *([zeros, zeros],) * 4)
        except ConfigError:
            pass                        # a pose the rods cannot reach: warm enough
        if len(tset.linkage_joints):
            _warm_springs(tset, joint_map, flat)
    for first_call in also:
        first_call(tset)
    return time.perf_counter() - start


def _warm_springs(tset, joint_map, flat):
    """
    Compile the springs' linkage kernels (effort and MIT output) with the bridge's arrays.

    Compiled at the first spring state instead, they stall the bridge for a second on a cold
    cache: a state decided that late trips the deadline against commands still queued.
    """
    from ..control.impedance import ImpedanceCore
    state = np.zeros((3, tset.num_joints + 1))[:, :-1]      # a view, as the fast route's
    mapped = np.zeros((3, tset.num_joints))
    joint_map(flat, mapped)
    state[:] = mapped
    joints = np.arange(tset.num_joints, dtype=np.intp)
    zeros = np.zeros(tset.num_joints)
    for output in ('effort', 'motor_gains'):
        core = ImpedanceCore(tset, output)
        for name in tset.joint_names:
            core.set_gain(name, 'p', 1.0)
            core.set_gain(name, 'd', 0.1)
        core.take(joints, zeros, zeros, zeros, 0)
        block = core.block_at(None, 0, state)
        if block is not None:       # the wires' views: efforts (m,), MIT rows (m, 5) strided
            m = len(block.names)
            out = (JointStateLayout(block.names, '', (0, 0, m)).encoder().fields[2]
                   if output == 'effort' else np.empty((m, 7))[:, :5])
            for joint_state in (state, mapped):     # the fast route's view, the typed's array
                core.fill(block, flat, joint_state, joint_map.jacobian, out)
