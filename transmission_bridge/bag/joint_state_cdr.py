"""
Decode and encode many sensor_msgs/JointState at once when they share one byte layout.

A JointState's CDR bytes have a fixed layout once its names, frame_id and array
lengths are fixed: only the stamp and the doubles change from message to message.
The layout is the nodes' own (:class:`transmission_bridge.messages.wire.JointStateLayout`, from
the CDR rules), checked here against the rosbags serializer on a probe message with
sentinel values; then a whole bag of same-layout messages becomes numpy slices of one
``(N, length)`` byte array. Padding bytes are not compared, so bags recorded from
Fast-CDR publishers (uninitialised padding) take the vectorised path too.
"""

import numpy as np

from ..messages import wire

MSGTYPE = 'sensor_msgs/msg/JointState'
FIELDS = wire.FIELDS
_SEC, _NANOSEC = 0x5EC05EC0 - 2 ** 31, 0x0A050A05


class JointStateBatchCodec:
    """Many messages of one byte layout at once: where their stamps and arrays live."""

    def __init__(self, typestore, names, frame_id, sizes):
        shape = wire.JointStateLayout(names, frame_id, sizes)
        self.names, self.frame_id, self.sizes = shape.names, shape.frame_id, shape.sizes
        self.length = shape.content_length
        self.template = np.frombuffer(shape.template_bytes(), dtype=np.uint8).copy()
        self.stamp_offset = shape.stamp_offset
        self.offsets = list(shape.offsets)
        constant = np.frombuffer(shape.fixed, dtype=np.uint8) != 0
        # The frame_id's characters too: a bag's messages are converted as one batch only
        # when every one has the same header but for its stamp (each keeps its frame_id).
        constant[shape.stamp_offset + 12:shape.header_end - 1] = True
        # The compared bytes as contiguous runs [start, end): compared as views, no copies.
        edges = np.flatnonzero(np.diff(np.r_[0, constant.astype(np.int8), 0]))
        self.constant_runs = list(zip(edges[::2].tolist(), edges[1::2].tolist()))
        rng = np.random.default_rng(len(self.names) * 7919 + sum(self.sizes))
        probes = [rng.uniform(1e3, 1e6, n) + np.pi for n in self.sizes]
        msg = build(typestore, names, frame_id, _SEC, _NANOSEC, probes)
        raw = np.frombuffer(bytes(typestore.serialize_cdr(msg, MSGTYPE)), dtype=np.uint8)
        if raw.shape[0] != self.length or not self.matches(raw[None, :])[0]:
            raise ValueError('JointState layout differs from the rosbags serializer')
        decoded = self.decode(raw[None, :])
        if not (decoded[0][0] == _SEC * 1_000_000_000 + _NANOSEC and all(
                np.array_equal(d[0], p) for d, p in zip(decoded[1], probes) if len(p))):
            raise ValueError('JointState layout probe did not decode back')

    @classmethod
    def of_message(cls, typestore, msg):
        """Return the layout of a deserialised JointState ``msg``."""
        return cls(typestore, msg.name, msg.header.frame_id,
                   [len(getattr(msg, f)) for f in FIELDS])

    def matches(self, raws):
        """Return a bool per row of ``raws`` (N, length): same names, frame and sizes."""
        ok = np.ones(raws.shape[0], dtype=bool)
        for start, end in self.constant_runs:
            ok &= (raws[:, start:end] == self.template[start:end]).all(axis=1)
        return ok

    def decode(self, raws):
        """Return ``(stamps_ns (N,), [position, velocity, effort])``; arrays (N, n) or None."""
        o = self.stamp_offset
        stamp = np.ascontiguousarray(raws[:, o:o + 8]).view('<i4')
        stamps = stamp[:, 0].astype(np.int64) * 1_000_000_000 + \
            stamp[:, 1].view('<u4').astype(np.int64)
        arrays = []
        for start, n in zip(self.offsets, self.sizes):
            if start is None:
                arrays.append(None)
            else:
                arrays.append(np.ascontiguousarray(raws[:, start:start + 8 * n]).view('<f8'))
        return stamps, arrays

    def encode(self, stamps_ns, arrays):
        """Return (N, length) bytes: the template with ``stamps_ns`` and ``arrays`` filled in."""
        n = len(stamps_ns)
        out = np.tile(self.template, (n, 1))
        sec, nanosec = np.divmod(np.asarray(stamps_ns, dtype=np.int64), 1_000_000_000)
        stamp = np.stack([sec.astype('<i4'), nanosec.astype('<u4').view('<i4')], axis=1)
        o = self.stamp_offset
        out[:, o:o + 8] = stamp.view(np.uint8).reshape(n, 8)
        for start, size, values in zip(self.offsets, self.sizes, arrays):
            if start is not None:
                out[:, start:start + 8 * size] = np.ascontiguousarray(
                    values, dtype='<f8').view(np.uint8).reshape(n, 8 * size)
        return out


def build(typestore, names, frame_id, sec, nanosec, arrays):
    """Return a rosbags JointState message."""
    js = typestore.types[MSGTYPE]
    header = typestore.types['std_msgs/msg/Header']
    time = typestore.types['builtin_interfaces/msg/Time']
    return js(header=header(stamp=time(sec=int(sec), nanosec=int(nanosec)), frame_id=frame_id),
              name=list(names), **{f: np.ascontiguousarray(a, dtype=np.float64)
                                   for f, a in zip(FIELDS, arrays)})


def batch_decode(typestore, raws):
    """
    Return ``(first, stamps_ns, [position, velocity, effort])`` of many raw JointStates.

    One numpy view for the whole batch when every message has the first one's byte layout
    (names, frame_id, array sizes) and the stamps do not go back; else None (decode them
    one by one). ``first`` is the first message, deserialised (its names are every
    message's); an array is (N, names), or None where the messages leave it empty.
    """
    if not raws:
        return None
    first = typestore.deserialize_cdr(raws[0], MSGTYPE)
    names = tuple(first.name)
    if len(set(names)) != len(names):
        return None
    try:
        codec = JointStateBatchCodec.of_message(typestore, first)
    except ValueError:
        return None
    if set(map(len, raws)) != {codec.length}:
        return None
    data = np.frombuffer(b''.join(raws), dtype=np.uint8).reshape(len(raws), codec.length)
    if not codec.matches(data).all():
        return None
    stamps, arrays = codec.decode(data)
    if (np.diff(stamps) < 0).any():
        return None
    return first, stamps, arrays
