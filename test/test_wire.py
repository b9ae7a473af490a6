"""
Byte layouts (wire.py) against two CDR implementations: rclpy's (Fast-CDR) and rosbags'.

rclpy's serialiser leaves padding bytes uninitialised and returns a longer buffer than the
content; rosbags' writes zeros and exactly the content. A layout must read both, and its
templates must equal rosbags' bytes.
"""

import numpy as np
import pytest
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState
from transmission_bridge.bag import io
from transmission_bridge.bag.joint_state_cdr import build
from transmission_bridge.messages.wire import JointStateLayout

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


def test_a_changed_name_frame_length_or_size_does_not_match():
    rng = np.random.default_rng(7)
    msg, _ = _message(rng, ['a', 'bb'], 'base', (2, 2, 2))
    layout = JointStateLayout.learn_message(serialize_message(msg), msg)
    for names, frame, sizes in [(['a', 'bc'], 'base', (2, 2, 2)), (['b', 'a'], 'base', (2, 2, 2)),
                                (['a', 'bb'], 'bas', (2, 2, 2)),
                                (['a', 'bb'], 'base1', (2, 2, 2)),
                                (['a', 'bb'], 'base', (2, 2, 0)),
                                (['a', 'bb'], 'base', (2, 0, 2))]:
        other, _ = _message(rng, names, frame, sizes)
        assert not layout.matches(serialize_message(other)), (names, frame, sizes)


def test_a_frame_id_of_the_same_length_matches_and_its_header_is_carried():
    # A driver's frame_id may count messages or name their source: not part of the layout.
    rng = np.random.default_rng(9)
    msg, _ = _message(rng, ['a', 'bb'], 'seq0001', (2, 2, 2))
    layout = JointStateLayout.learn_message(serialize_message(msg), msg)
    for frame in ('seq0002', 'seq9999', 'left_a'[:6] + 'x'):
        other, arrays = _message(rng, ['a', 'bb'], frame, (2, 2, 2))
        raw = serialize_message(other)
        assert layout.matches(raw)
        written = layout.encoder()
        written.set_header(layout.header_bytes(raw))
        written.fill(arrays)
        back = deserialize_message(written.to_bytes(), JointState)
        assert back.header.frame_id == frame and back.header.stamp == other.header.stamp


def test_a_frame_id_that_rclpy_would_not_read_as_its_bytes_does_not_match():
    # rclpy ends a string at a NUL and reads invalid UTF-8 as U+FFFD: an output that copied
    # those header bytes would differ from the typed route's, so such messages are its.
    rng = np.random.default_rng(10)
    msg, _ = _message(rng, ['a', 'bb'], 'xyz', (2, 2, 2))
    data = serialize_message(msg)
    layout = JointStateLayout.learn_message(data, msg)
    at = layout.stamp_offset + 13                       # the frame_id's second character
    for byte in (0x00, 0xff, 0x80):
        bad = bytearray(data)
        bad[at] = byte
        assert not layout.matches(bytes(bad)), byte
    ok = bytearray(data)
    ok[at] = ord('Q')
    assert layout.matches(bytes(ok))


def test_a_layout_that_does_not_decode_its_message_is_not_learned():
    rng = np.random.default_rng(8)
    msg, _ = _message(rng, ['a', 'bb'], 'base', (2, 2, 2))
    data = bytearray(serialize_message(msg))
    assert JointStateLayout.learn_message(bytes(data[:40]), msg) is None     # cut short
    layout = JointStateLayout.learn_message(bytes(data), msg)
    end = layout.offsets[2] + 16
    data[end - 1] ^= 0x01                                # the last effort value, not msg's
    assert JointStateLayout.learn_message(bytes(data), msg) is None


def _fields(data):
    """Return what rclpy decodes ``data`` to (names, frame, sizes), or None if it cannot."""
    try:
        msg = deserialize_message(data, JointState)
    except Exception:   # noqa: B902 (any refusal by rclpy's deserialiser means: not this layout)
        return None
    return (list(msg.name), msg.header.frame_id,
            (len(msg.position), len(msg.velocity), len(msg.effort)))


def test_a_layout_matches_only_bytes_rclpy_reads_as_its_message():
    """
    Flip each byte of a message: a match is never a message rclpy decodes otherwise.

    Except in the frame_id's characters, which a layout does not compare: there a flip is
    a message of another frame_id, and it matches.

    Flips go to a message whose padding already differs from the one learned (so the
    check's shortcut, the strings as last matched, is in play), and to the learned one.
    The stamp's and the values' bytes are another message of the layout: those match.
    """
    rng = np.random.default_rng(11)
    names, frame, sizes = SHAPES[0]
    msg, _ = _message(rng, names, frame, sizes)
    data = serialize_message(msg)
    layout = JointStateLayout.learn_message(data, msg)
    want = _fields(data)
    frame_chars = range(layout.stamp_offset + 12, layout.header_end - 1)
    variant = bytearray(data)
    for i in range(layout.content_length):      # new padding (and stamp, values, frame_id)
        if not layout.fixed[i]:
            variant[i] = int(rng.integers(32, 127) if i in frame_chars else rng.integers(256))
    values = {i for o, n in zip(layout.offsets, layout.sizes) for i in range(o, o + 8 * n)}
    refused = 0
    for base in (bytes(variant), data):
        want = _fields(base)                    # the variant's frame_id is its own
        for i in range(layout.content_length):
            assert layout.matches(base)             # the shortcut now holds base's bytes
            flipped = bytearray(base)
            flipped[i] ^= 0x01
            match = layout.matches(bytes(flipped))
            got = _fields(bytes(flipped))
            if i in frame_chars:            # another frame_id of that length: still ours
                assert match and got[0] == want[0] and got[2] == want[2], i
                assert got[1].encode() == layout.header_bytes(bytes(flipped))[12:-1]
                continue
            assert not match or got == want, i
            assert match or not (4 <= i < 12 or i in values), i
            refused += not match
    assert refused >= 2 * len(''.join(names))   # every character of the names, both times


def test_an_inbox_takes_a_matching_message_and_nothing_else():
    rng = np.random.default_rng(12)
    names, frame, sizes = SHAPES[0]
    msg, _ = _message(rng, names, frame, sizes)
    inbox = JointStateLayout.learn_message(serialize_message(msg), msg).inbox()
    other, arrays = _message(rng, names, frame, sizes)
    assert inbox.take(serialize_message(other)) == (
        other.header.stamp.sec * 10**9 + other.header.stamp.nanosec)
    for got, want in zip(inbox.arrays, arrays):
        assert got.tobytes() == want.tobytes()
    before = bytes(inbox.buf)
    renamed, _ = _message(rng, ['a', 'bb', 'ccc', 'ddde'], frame, sizes)
    assert inbox.take(serialize_message(renamed)) is None
    assert bytes(inbox.buf) == before                   # refused: nothing copied in


@pytest.mark.parametrize('pairs', [
    [('base', 'arm')],
    [('world', 'link_1'), ('link_1', 'a_much_longer_link_name'), ('x', 'y'), ('y', 'zz')],
    [(f'prefix/l{i}', f'prefix/l{i + 1}') for i in range(30)],
])
def test_transforms_template_is_what_rclpy_and_rosbags_read(pairs):
    tf2_msgs = pytest.importorskip('tf2_msgs.msg', reason='tf2_msgs is not installed')
    from transmission_bridge.messages.wire import TransformsTemplate
    rng = np.random.default_rng(len(pairs))
    t = TransformsTemplate(pairs)
    for sec, nanosec in ((7, 123), (2**31 - 1, 999_999_999)):
        t.values[:] = rng.normal(size=(len(pairs), 7))
        t.fill()
        t.set_stamp(np.array([sec, nanosec], dtype='<u4').tobytes())
        data = t.to_bytes()
        msg = deserialize_message(data, tf2_msgs.TFMessage)
        assert [(m.header.frame_id, m.child_frame_id) for m in msg.transforms] == pairs
        for m, row in zip(msg.transforms, t.values):
            tr, rot = m.transform.translation, m.transform.rotation
            assert [tr.x, tr.y, tr.z, rot.x, rot.y, rot.z, rot.w] == row.tolist()
            assert (m.header.stamp.sec, m.header.stamp.nanosec) == (sec, nanosec)
        # rosbags' own CDR writer gives the same bytes (padding zero in both).
        assert bytes(STORE.serialize_cdr(STORE.deserialize_cdr(data, 'tf2_msgs/msg/TFMessage'),
                                         'tf2_msgs/msg/TFMessage')) == data
