"""
Byte layouts (wire.py) against two CDR implementations: rclpy's (Fast-CDR) and rosbags'.

rclpy's serialiser leaves padding bytes uninitialised and returns a longer buffer than the
content; rosbags' writes zeros and exactly the content. A layout must read both, and its
templates must equal rosbags' bytes.
"""

import numpy as np
import pytest
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState
from transmission_bridge.bag import io
from transmission_bridge.bag.joint_state_cdr import build
from transmission_bridge.wire import JointStateLayout

STORE = io.typestore()
SHAPES = [  # names, frame_id, sizes: odd string lengths put padding everywhere
    (['a', 'bb', 'ccc', 'dddd'], 'x', (4, 4, 4)),
    (['shoulder_pan_motor'], '', (1, 0, 1)),
    (['m1', 'm2'], 'base_link', (0, 0, 0)),
    (['j'], 'abc', (0, 1, 0)),
    ([], 'f', (0, 0, 0)),
]


def _message(rng, names, frame, sizes):
    msg = JointState(name=list(names))
    msg.header.frame_id = frame
    msg.header.stamp.sec, msg.header.stamp.nanosec = int(rng.integers(0, 2**31)), int(
        rng.integers(0, 10**9))
    arrays = [rng.normal(size=n) for n in sizes]
    msg.position, msg.velocity, msg.effort = (a.tolist() for a in arrays)
    return msg, arrays


@pytest.mark.parametrize('names, frame, sizes', SHAPES)
def test_layout_reads_what_rclpy_wrote_and_writes_what_rosbags_writes(names, frame, sizes):
    rng = np.random.default_rng(len(names) * 31 + len(frame))
    msg, arrays = _message(rng, names, frame, sizes)
    data = serialize_message(msg)
    layout = JointStateLayout.learn_message(data, msg)
    assert layout is not None
    for _ in range(5):               # other values, same layout: read back bit for bit
        other, arrays = _message(rng, names, frame, sizes)
        raw = serialize_message(other)
        assert layout.matches(raw)
        assert layout.stamp_ns(raw) == other.header.stamp.sec * 10**9 + other.header.stamp.nanosec
        for got, want in zip(layout.arrays(raw), arrays):
            assert got.tobytes() == want.tobytes()
        if layout.stacked:          # one block, rows n + 1 doubles apart
            n = len(names)
            block = layout.block(raw)
            assert len(block) == 3 * n + 2
            rows = [block[r * (n + 1):r * (n + 1) + n] for r in range(3)]
            assert np.stack(rows).tobytes() == np.stack(arrays).tobytes()
        tight = bytes(STORE.serialize_cdr(build(
            STORE, names, frame, other.header.stamp.sec, other.header.stamp.nanosec, arrays),
            'sensor_msgs/msg/JointState'))
        written = layout.encoder().write(layout.stamp_bytes(raw), arrays)
        assert written == tight


def test_a_changed_name_frame_or_length_does_not_match():
    rng = np.random.default_rng(7)
    msg, _ = _message(rng, ['a', 'bb'], 'base', (2, 2, 2))
    layout = JointStateLayout.learn_message(serialize_message(msg), msg)
    for names, frame, sizes in [(['a', 'bc'], 'base', (2, 2, 2)), (['b', 'a'], 'base', (2, 2, 2)),
                                (['a', 'bb'], 'basf', (2, 2, 2)),
                                (['a', 'bb'], 'base', (2, 2, 0)),
                                (['a', 'bb'], 'base', (2, 0, 2))]:
        other, _ = _message(rng, names, frame, sizes)
        assert not layout.matches(serialize_message(other)), (names, frame, sizes)


def test_a_layout_that_does_not_decode_its_message_is_not_learned():
    rng = np.random.default_rng(8)
    msg, _ = _message(rng, ['a', 'bb'], 'base', (2, 2, 2))
    data = bytearray(serialize_message(msg))
    assert JointStateLayout.learn_message(bytes(data[:40]), msg) is None     # cut short
    layout = JointStateLayout.learn_message(bytes(data), msg)
    end = layout.offsets[2] + 16
    data[end - 1] ^= 0x01                                # the last effort value, not msg's
    assert JointStateLayout.learn_message(bytes(data), msg) is None
