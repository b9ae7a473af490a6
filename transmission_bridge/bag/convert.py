"""
Offline conversion: apply the transmissions (and a model) to every actuator state in a bag.

The output bag holds every message of the other topics unchanged and, for each
actuator-state message the live bridge would have answered, the ``joint_states``
it would have published (same header stamp, same log time) and, with a model,
the kinematics node's ``gravity_torques`` and the bridge's ``actuator_commands``
for them (each motor's holding torque, as in ``robot.launch.py`` with
``feed_forward:=gravity``). The actuator states themselves are
kept only with ``keep_input=True``. Two paths give those results:

* **exact**: each message goes through the bridge's
  :class:`~transmission_bridge.mapping.state.ActuatorStates` and
  :class:`~transmission_bridge.mapping.commands.CommandMapper` and the kinematics node's
  :class:`~transmission_bridge.kinematics_node.core.KinematicsCore`, the very code the nodes run;
* **vectorised** (used when every actuator message has the same names, frame and
  arrays, no infinite value, stamps never go back, no actuator has an absolute encoder
  and no linkage refuses a state): the whole bag is decoded
  into arrays (:mod:`.joint_state_cdr`) and mapped in one call. The transmission
  maps are element-wise, so joint states are bit-identical to the exact path;
  gravity uses the batch kinematics and agrees to 1e-12. The motor holding torques
  go through :meth:`CommandMapper.map_trajectory` as one many-point trajectory, which is
  bit-identical to :meth:`CommandMapper.map_command` message by message.
"""

import contextlib
import dataclasses
import gc

import numpy as np

from . import encode, io
from .errors import BagError
from .joint_state_cdr import batch_decode, FIELDS, MSGTYPE
from ..kinematics import holding_torques
from ..kinematics_node.core import KinematicsCore
from ..mapping.commands import CommandMapper
from ..mapping.measurement import Measured
from ..mapping.state import ActuatorStates
from ..transmissions import ConfigError


@dataclasses.dataclass
class Conversion:
    """What a conversion read and wrote."""

    messages_in: int = 0
    actuator_messages: int = 0
    joint_states: int = 0
    gravity_torques: int = 0
    actuator_commands: int = 0
    vectorised: bool = False
    times: object = None              # stamps (s) of the joint states written
    actuator_names: tuple = ()
    actuator_positions: object = None
    joint_names: tuple = ()
    joint_positions: object = None
    command_names: tuple = ()         # actuators of actuator_commands (empty: none written)
    command_efforts: object = None    # their holding torques, one row per joint state
    holding_names: tuple = ()
    holding_torques: object = None    # joint holding torques, one row per joint state
    actuator_log_times: object = None  # log times (ns) of the actuator states read
    rejected: int = 0                 # actuator states the bridge refused (any reason)
    non_finite: int = 0               # NaN or infinite values in the actuator states
    refused_linkage: int = 0          # linkage states refused (their joints left out)


def _topic(name):
    return name if name.startswith('/') else '/' + name


def convert_bag(in_bag, out_bag, tset, model=None, topic='/actuator_states',
                joint_states_topic='/joint_states',
                gravity_topic='/kinematics/gravity_torques', storage='mcap', progress=None,
                keep_input=False, commands_topic='/actuator_commands'):
    """Convert ``in_bag`` into ``out_bag``; return a :class:`Conversion`. Errors: BagError."""
    topics = _Topics(*map(_topic, (topic, joint_states_topic, gravity_topic, commands_topic)))
    with _collector_paused():
        return _convert(in_bag, out_bag, tset, model, topics, storage, progress, keep_input)


@dataclasses.dataclass(frozen=True)
class _Topics:
    actuator_states: str
    joint_states: str
    gravity: str
    commands: str


@contextlib.contextmanager
def _collector_paused():
    """Pause the cyclic garbage collector: a bag's millions of tuples hold no cycles."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _convert(in_bag, out_bag, tset, model, topics, storage, progress, keep_input):
    topic = topics.actuator_states
    ts = io.typestore()
    reader = io.open_reader(in_bag)
    try:
        conns = [c for c in reader.connections if c.topic == topic]
        if not conns:
            topics = sorted({c.topic for c in reader.connections})
            raise BagError(f'topic {topic!r} is not in bag {str(in_bag)!r} (it has: '
                           f'{", ".join(topics) or "no topics"})')
        wrong = [c.msgtype for c in conns if c.msgtype != MSGTYPE]
        if wrong:
            raise BagError(f'topic {topic!r} in {str(in_bag)!r} has type {wrong[0]}, '
                           f'expected {MSGTYPE}')
        outputs = {topics.joint_states}
        if model is not None:
            outputs |= {topics.gravity, topics.commands}
        taken = {c.topic for c in reader.connections} & outputs
        if taken:
            raise BagError(f'the input already has {sorted(taken)[0]!r}; choose another '
                           'output topic')
        entries = []
        total = reader.message_count
        for k, entry in enumerate(io.iter_messages(reader)):
            entries.append(entry)
            if progress and k % 20000 == 0:
                progress('reading', k, total)
    finally:
        reader.close()
    result = Conversion(messages_in=len(entries))
    act_pos = [i for i, (c, _, _) in enumerate(entries) if c.topic == topic]
    result.actuator_messages = len(act_pos)
    result.actuator_log_times = np.array([entries[i][1] for i in act_pos], dtype=np.int64)
    raws = [entries[i][2] for i in act_pos]
    joint = _vectorised_joint_states(ts, tset, raws) if raws else None
    result.vectorised = joint is not None
    if joint is None:
        joint = _exact_joint_states(ts, tset, topic, raws)
    result.rejected, result.non_finite = joint.rejected, joint.non_finite
    result.refused_linkage = joint.refused_linkage
    gravity = commands = None
    if model is not None:
        gravity = (_vectorised_gravity(model, joint) if result.vectorised else None) or \
            _exact_gravity(model, joint)
        commands = _motor_holding_torques(tset, gravity, joint.actuator_velocities)
    _record_for_plot(result, tset, joint, gravity, commands)
    # The kinematics node's outputs are in its base frame as TF names it: the model's world
    # (a URDF's root link), and the bridge copies their header into actuator_commands.
    frame = model.root_frame if model is not None else ''
    _write(out_bag, storage, ts, entries, act_pos, joint, gravity, commands, topics, result,
           progress, keep_input, frame)
    return result


# --- joint states ---------------------------------------------------------------------
@dataclasses.dataclass
class _Outputs:
    """Per actuator message: index of the output row (or -1), and the output rows."""

    row_of: object
    stamps: object
    frame_ids: list
    names: list
    arrays: list          # per output row: (position, velocity, effort) each array or None
    actuator_positions: object     # per output row: the actuator positions used (for plots)
    actuator_velocities: object = None  # per output row: the motors' velocities (losses)
    batch_arrays: object = None   # vectorised: [position, velocity, effort] (M, n) or None
    batch_names: tuple = ()
    frame_id: str = ''
    rejected: int = 0
    non_finite: int = 0
    refused_linkage: int = 0


def _vectorised_joint_states(ts, tset, raws):
    if any(a.encoder_period is not None or a.output_encoder is not None
           for s in tset.specs for a in s.actuators):
        return None     # readings made whole, second encoders heard: in order, as the bridge
    batch = batch_decode(ts, raws)
    if batch is None:
        return None
    first, stamps, arrays = batch
    names = tuple(first.name)
    if any(a is not None and np.isinf(a).any() for a in arrays):
        return None
    index = tset.actuator_index
    rows = [k for k, name in enumerate(names) if name in index]
    cols = [index[names[k]] for k in rows]
    n = len(raws)
    values = []
    for a in arrays:
        full = np.full((n, tset.num_actuators), np.nan)
        if a is not None:
            full[:, cols] = a[:, rows]
        values.append(full)
    reported = np.zeros(tset.num_actuators, dtype=bool)
    reported[cols] = True
    complete = [bool(reported[motors].all()) for motors in tset.membership.joint_actuators]
    idx = np.flatnonzero(complete)
    non_finite = sum(int(np.isnan(a).sum()) for a in arrays if a is not None)
    if not len(idx):
        return _Outputs(np.full(n, -1), stamps[:0], [], [], [], values[0][:0],
                        non_finite=non_finite)
    present = [a is not None for a in arrays]
    stacked = np.stack(values, axis=1)
    if not tset.units.identity:             # the driver's units: SI as the bridge takes them
        tset.units.states_to_si(stacked)
        values = list(stacked.transpose(1, 0, 2))
    # The map the bridge applies to each message, applied to them all: the same bits.
    state = tset.joint_state(stacked)
    linkage = np.intersect1d(idx, tset.linkage_joints)
    if len(linkage) and np.isnan(state[:, :, linkage][:, present]).any():
        return None     # a linkage state refused: the bridge leaves its joints out, as exact
    pos, vel, eff = (state[:, k, idx] if present[k] else None for k in range(3))
    joint_names = tuple(tset.joint_names[i] for i in idx)
    return _Outputs(np.arange(n), stamps, [first.header.frame_id] * n, [joint_names] * n, None,
                    values[0], values[1], [pos, vel, eff], joint_names,
                    first.header.frame_id, non_finite=non_finite)


def _exact_joint_states(ts, tset, topic, raws):
    core = ActuatorStates(tset)
    row_of = np.full(len(raws), -1)
    stamps, frame_ids, names, arrays, motors, speeds = [], [], [], [], [], []
    non_finite = 0
    for k, raw in enumerate(raws):
        msg = ts.deserialize_cdr(raw, MSGTYPE)
        non_finite += sum(int((~np.isfinite(np.asarray(a, dtype=float))).sum())
                          for a in (msg.position, msg.velocity, msg.effort))
        stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        out = core.ingest(topic, msg.name, msg.position, msg.velocity, msg.effort, stamp)
        if out is None:
            continue
        row_of[k] = len(stamps)
        stamps.append(stamp)
        frame_ids.append(msg.header.frame_id)
        names.append(out.names)
        arrays.append((out.position, out.velocity, out.effort))
        motors.append(core.actuator_positions())
        speeds.append(core.values[1].copy())
    c = core.counters
    rejected = (c.rejected_length_mismatch + c.rejected_duplicate_names
                + c.rejected_non_finite)
    return _Outputs(row_of, np.array(stamps, dtype=np.int64), frame_ids, names, arrays,
                    np.array(motors).reshape(-1, tset.num_actuators),
                    np.array(speeds).reshape(-1, tset.num_actuators), rejected=rejected,
                    non_finite=non_finite, refused_linkage=c.refused_linkage_states)


# --- gravity --------------------------------------------------------------------------
def _vectorised_gravity(model, joint):
    pos = joint.batch_arrays[0] if joint.batch_arrays else None
    if pos is not None and np.isnan(pos).any():
        return None
    index = {n: i for i, n in enumerate(model.joint_names)}
    cols = [(k, index[n]) for k, n in enumerate(joint.batch_names) if n in index]
    m = len(joint.stamps)
    Q = np.tile(model.default_positions, (m, 1))
    if pos is not None and cols:
        src, dst = zip(*cols)
        Q[:, list(dst)] = pos[:, list(src)]
    holding = (holding_torques(model.gravity_generalized_forces(Q)) if m
               else np.zeros((0, model.num_positions)))
    return Q, holding, model.joint_names


def _exact_gravity(model, joint):
    core = KinematicsCore(model)
    qs, holding = [], []
    for k in range(len(joint.stamps)):
        names, (pos, vel, _) = _row(joint, k)
        out = core.ingest(names, [] if pos is None else pos, [] if vel is None else vel,
                          int(joint.stamps[k]))
        qs.append(out.q)
        holding.append(out.holding)
    n = model.num_positions
    return (np.array(qs).reshape(-1, n), np.array(holding).reshape(-1, n), model.joint_names)


# --- motor holding torques ------------------------------------------------------------
@dataclasses.dataclass
class _Commands:
    """What the bridge publishes on actuator_commands for each gravity_torques row."""

    row_of: object        # per gravity row: index into names/positions/efforts, or -1
    names: list
    positions: list
    efforts: list


def _motor_holding_torques(tset, gravity, speeds):
    """
    Map every gravity_torques row through the bridge's command rules.

    ``speeds``: the motors' velocities of each row's state, which a lossy stage's torque
    takes, as the live bridge does for a command of that state's stamp.
    """
    Q, holding, names = gravity
    m = len(Q)
    if not m:
        return _Commands(np.zeros(0, dtype=np.int64), [], [], [])
    known = tset.joint_index
    cols = [k for k, n in enumerate(names) if n in known]
    first = CommandMapper(tset).map_command(names, Q[0], [], holding[0])
    lossless = tset.losses.lossless
    if (lossless and first is not None and np.isfinite(Q).all()
            and np.isfinite(holding).all()):
        # Every row has the same names, all finite, and the first is complete (so every
        # transmission touched is covered whole): one many-point trajectory, the same
        # element-wise operations map_command runs per message. A point beyond a limit
        # refuses the trajectory; the bridge limits each command instead, as the loop below.
        try:
            out_names, (pos, _, _, eff) = CommandMapper(tset).map_trajectory(
                [names[k] for k in cols], Q[:, cols], [[]] * m, [[]] * m, holding[:, cols])
        except ConfigError:
            pass
        else:
            return _Commands(np.arange(m), [out_names] * m, pos, eff)
    row = [0]

    def measured(stamp_ns=None):        # the state of the row's stamp, as the bridge holds
        n_j, n_a = tset.num_joints, tset.num_actuators
        return Measured(np.full(n_j, np.nan), np.full(n_j, np.nan), np.full(n_a, np.nan),
                        speeds[row[0]] if speeds is not None else np.full(n_a, np.nan))
    core = CommandMapper(tset, measured=None if lossless else measured)
    row_of = np.full(m, -1, dtype=np.int64)
    out_names, positions, efforts = [], [], []
    for k in range(m):
        row[0] = k
        out = core.map_command(names, Q[k], [], holding[k])
        if out is None:
            continue
        row_of[k] = len(out_names)
        out_names.append(out.names)
        positions.append(out.position)
        efforts.append(out.effort)
    return _Commands(row_of, out_names, positions, efforts)


def _row(joint, k):
    if joint.batch_arrays is not None:
        return joint.batch_names, [None if a is None else a[k] for a in joint.batch_arrays]
    return joint.names[k], joint.arrays[k]


# --- output -----------------------------------------------------------------------------
def _write(out_bag, storage, ts, entries, act_pos, joint, gravity, commands, topics, result,
           progress, keep_input, frame):
    js_rows = encode.joint_states(ts, joint)
    grav_rows = (encode.gravity_torques(ts, gravity, joint, frame) if gravity is not None
                 else None)
    cmd_rows = (encode.actuator_commands(ts, commands, joint, frame) if commands is not None
                else None)
    with io.atomic_writer(out_bag, storage) as writer:
        copies = {}
        converted = {entries[i][0].id for i in act_pos}
        for c, _, _ in entries:
            if c.id not in copies and (keep_input or c.id not in converted):
                copies[c.id] = writer.add_connection(
                    c.topic, c.msgtype, msgdef=c.msgdef.data, rihs01=c.digest,
                    serialization_format=c.ext.serialization_format,
                    offered_qos_profiles=c.ext.offered_qos_profiles)
        js_conn = writer.add_connection(topics.joint_states, MSGTYPE, typestore=ts)
        grav_conn = (writer.add_connection(topics.gravity, MSGTYPE, typestore=ts)
                     if grav_rows is not None else None)
        cmd_conn = (writer.add_connection(topics.commands, MSGTYPE, typestore=ts)
                    if cmd_rows is not None else None)
        # Per input entry: -2 not an actuator state, -1 no output, else the output row.
        out_row = np.full(len(entries), -2, dtype=np.int64)
        out_row[np.asarray(act_pos, dtype=np.int64)] = joint.row_of
        write = writer.write
        for i, ((c, stamp, raw), row) in enumerate(zip(entries, out_row.tolist())):
            if row == -2 or keep_input:
                write(copies[c.id], stamp, raw)
            if row >= 0:
                write(js_conn, stamp, js_rows[row])
                result.joint_states += 1
                if grav_conn is not None:
                    write(grav_conn, stamp, grav_rows[row])
                    result.gravity_torques += 1
                if cmd_conn is not None and cmd_rows[row] is not None:
                    write(cmd_conn, stamp, cmd_rows[row])
                    result.actuator_commands += 1
            if progress and i % 20000 == 0:
                progress('writing', i, len(entries))


def _record_for_plot(result, tset, joint, gravity, commands):
    """Keep positions and torques over time for the plot and the demo (stamps in s)."""
    result.times = joint.stamps * 1e-9
    if gravity is not None:
        result.holding_names = tuple(gravity[2])
        result.holding_torques = gravity[1]
    if commands is not None and commands.names and (commands.row_of >= 0).all() \
            and len(set(commands.names)) == 1:
        result.command_names = commands.names[0]
        result.command_efforts = np.asarray(commands.efforts).reshape(
            -1, len(result.command_names))
    result.actuator_names = tset.actuator_names
    result.actuator_positions = joint.actuator_positions
    if joint.batch_arrays is not None:
        result.joint_names = joint.batch_names
        result.joint_positions = joint.batch_arrays[0]
        return
    if joint.names:
        result.joint_names = joint.names[-1]
        width = len(result.joint_names)
        result.joint_positions = np.array([
            a[0] if a[0] is not None and len(a[0]) == width else np.full(width, np.nan)
            for a in joint.arrays])


__all__ = ['Conversion', 'convert_bag', 'FIELDS']
