"""
The converter's outputs as CDR bytes, as the nodes publish them (:mod:`.convert`).

``joint_states`` (one batch layout as one array, else message by message), the kinematics
node's ``gravity_torques`` and the bridge's ``actuator_commands`` (positions and efforts).
"""

import numpy as np

from .joint_state_cdr import build, JointStateBatchCodec, MSGTYPE


def joint_states(ts, joint):
    if joint.batch_arrays is not None:
        if not len(joint.stamps):
            return []
        sizes = [0 if a is None else a.shape[1] for a in joint.batch_arrays]
        codec = JointStateBatchCodec(ts, joint.batch_names, joint.frame_id, sizes)
        return [r.tobytes() for r in codec.encode(joint.stamps, [
            a if a is not None else np.zeros((len(joint.stamps), 0))
            for a in joint.batch_arrays])]
    return [_serialize(ts, joint.names[k], joint.frame_ids[k], joint.stamps[k],
                       [np.zeros(0) if a is None else a for a in joint.arrays[k]])
            for k in range(len(joint.stamps))]


def position_effort(ts, names, stamps, position, effort, frame):
    """Encode rows of (position, effort) messages in ``frame``, as the nodes publish them."""
    if not len(stamps):
        return []
    codec = JointStateBatchCodec(ts, names, frame, [len(names), 0, len(names)])
    return [r.tobytes() for r in codec.encode(stamps, [position, None, effort])]


def gravity_torques(ts, gravity, joint, frame):
    Q, holding, names = gravity
    return position_effort(ts, names, joint.stamps, Q, holding, frame)


def actuator_commands(ts, commands, joint, frame):
    """Per joint-state row: the actuator_commands bytes, or None where refused."""
    rows = [None] * len(commands.row_of)
    if isinstance(commands.efforts, np.ndarray):
        return position_effort(ts, commands.names[0] if rows else (), joint.stamps,
                               commands.positions, commands.efforts, frame)
    for k, i in enumerate(commands.row_of.tolist()):
        if i >= 0:
            rows[k] = _serialize(ts, commands.names[i], frame, joint.stamps[k],
                                 [commands.positions[i], np.zeros(0), commands.efforts[i]])
    return rows


def _serialize(ts, names, frame_id, stamp, arrays):
    sec, nanosec = divmod(int(stamp), 1_000_000_000)
    return bytes(ts.serialize_cdr(build(ts, names, frame_id, sec, nanosec, arrays), MSGTYPE))
