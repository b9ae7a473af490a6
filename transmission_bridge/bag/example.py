"""Write actuator-state bags of a robot moving smoothly (examples, tests, benchmarks)."""

import numpy as np

from . import io
from .joint_state_cdr import build, JointStateBatchCodec, MSGTYPE
from ..simulation.demo_motion import joint_motion


def write_actuator_bag(path, tset, seconds=3.0, rate=100.0, storage='mcap',
                       topic='/actuator_states', start_ns=1_700_000_000_000_000_000,
                       frame_id='motors'):
    """
    Write ``seconds`` of actuator states at ``rate`` Hz to a new bag; return the message count.

    Header stamps and log times are ``start_ns`` plus the sample time. Effort is the
    actuator effort of a small joint torque, so every interface carries data.
    """
    ts = io.typestore()
    n = int(round(seconds * rate))
    t = np.arange(n) / rate
    q, v = joint_motion(tset, t)
    stamps = start_ns + np.round(t * 1e9).astype(np.int64)
    pos = tset.joint_to_actuator('position', q)
    vel = tset.joint_to_actuator('velocity', v, positions=q)
    eff = tset.joint_to_actuator('effort', 0.5 * np.sin(q), positions=q)
    names = list(tset.actuator_names)
    codec = JointStateBatchCodec(ts, names, frame_id, [len(names)] * 3)
    rows = codec.encode(stamps, [pos, vel, eff])
    with io.atomic_writer(path, storage) as writer:
        conn = writer.add_connection(topic, MSGTYPE, typestore=ts)
        for stamp, row in zip(stamps.tolist(), rows):
            writer.write(conn, stamp, row.tobytes())
    return n


def one_message(tset, stamp_ns, positions, frame_id='motors'):
    """Return the CDR bytes of one actuator JointState (positions only)."""
    ts = io.typestore()
    sec, nanosec = divmod(int(stamp_ns), 1_000_000_000)
    return bytes(ts.serialize_cdr(build(ts, tset.actuator_names, frame_id, sec, nanosec,
                                        [positions, [], []]), MSGTYPE))


def write_states_bag(path, names, stamps_ns, positions, velocities=None, efforts=None,
                     topic='/actuator_states', frame_id='motors', storage='mcap'):
    """
    Write one JointState per stamp (``stamps_ns`` int, N) to a new bag; return the count.

    ``positions``, ``velocities``, ``efforts``: (N, len(names)), or None for a field the
    messages leave empty (as a driver that publishes no velocities).
    """
    ts = io.typestore()
    n = len(stamps_ns)
    fields = [np.asarray(x, dtype=float) if x is not None else np.zeros((n, 0))
              for x in (positions, velocities, efforts)]
    codec = JointStateBatchCodec(ts, list(names), frame_id, [f.shape[1] for f in fields])
    rows = codec.encode(np.asarray(stamps_ns, dtype=np.int64), fields)
    with io.atomic_writer(path, storage) as writer:
        conn = writer.add_connection(topic, MSGTYPE, typestore=ts)
        for stamp, row in zip(np.asarray(stamps_ns).tolist(), rows):
            writer.write(conn, int(stamp), row.tobytes())
    return n
