"""
Messages as bytes: fixed CDR layouts for the nodes' per-message fast paths.

A sensor_msgs/JointState (or a PoseArray, a Float64...) has a fixed byte layout once its
names, the length of its frame_id and its sequence lengths are fixed: only the header (the
stamp, and the frame_id's characters) and the doubles change from message to message. The
nodes' fast paths (``mapping/fast_route.py``, ``kinematics_node/fast.py``) learn the layout
of an input from a message their typed path has decoded, then read the next messages of that
layout as numpy views of the received bytes, and write their outputs into preallocated byte
templates (header and doubles in place), which ``Publisher.publish`` sends as they are.
Anything else takes the typed path.

CDR as ROS 2 uses it (XCDR1, little endian): a 4-byte encapsulation header (``00 01``,
two option bytes), then the fields in order, each aligned to its size counted from the end
of that header; a string is a ``uint32`` length (with the NUL) and the bytes with the NUL;
a sequence is a ``uint32`` count and the elements (no alignment when the count is 0).

Which bytes are compared: the frame_id's length and its NUL, the names and the sequence
counts. Not the frame_id's characters (a driver may put a counter or a source tag there:
every message then keeps to the fast path, and its header is copied to the output as the
typed path copies it), as long as they are ASCII and no NUL; and never padding bytes,
because Fast-CDR leaves them uninitialised. The received length may exceed the content
(rclpy's serialiser returns a buffer a few bytes longer); a message matches a learned
layout when its length equals the length of the message the layout was learned from and
the compared bytes are equal. A layout is only used after it has decoded
the message it was learned from to the same stamp and values, bit for bit
(:meth:`JointStateLayout.learn`).

No rclpy here: the nodes pass bytes in and publish the bytes that come out.

>>> layout = JointStateLayout(['a', 'b'], 'base', (2, 0, 2))
>>> data = layout.template_bytes()
>>> layout.matches(data), layout.sizes, layout.content_length
(True, (2, 0, 2), 92)
>>> layout.matches(JointStateLayout(['a', 'b'], 'arm0', (2, 0, 2)).template_bytes())
True
"""

import struct

import numpy as np

FIELDS = ('position', 'velocity', 'effort')
_HEADER = b'\x00\x01\x00\x00'
_ENCAPSULATION = _HEADER[:2]        # CDR, little-endian (the options bytes may differ)
STAMP = struct.Struct('<iI')         # a builtin_interfaces/Time: sec, nanosec
_EMPTY = np.empty(0)


class CdrWriter:
    """Builds a CDR template and remembers where its variable numbers go."""

    def __init__(self):
        self.buf = bytearray(_HEADER)
        self.fixed = bytearray(b'\xff\xff\x00\x00')   # which bytes a layout check compares

    def _align(self, size):
        pad = -(len(self.buf) - 4) % size
        self.buf += bytes(pad)
        self.fixed += bytes(pad)

    def _put(self, data, fixed):
        start = len(self.buf)
        self.buf += data
        self.fixed += (b'\xff' if fixed else b'\x00') * len(data)
        return start

    def stamp(self):
        """Append a builtin_interfaces/Time (variable); return its offset."""
        self._align(4)
        return self._put(bytes(8), False)

    def uint32(self, value):
        """Append a constant 32-bit count: a string length or a sequence length."""
        self._align(4)
        return self._put(struct.pack('<I', value), True)

    def string(self, text):
        """Append a constant string."""
        data = text.encode() + b'\x00'
        self.uint32(len(data))
        self._put(data, True)

    def doubles(self, count):
        """Append variable doubles, ``count`` of them, not a sequence; return their offset."""
        if count == 0:
            return len(self.buf)
        self._align(8)
        return self._put(bytes(8 * count), False)

    def header(self, frame_id):
        """Append a std_msgs/Header; return the stamp offset."""
        offset = self.stamp()
        self.string(frame_id)
        return offset


def message_buffer(length):
    """
    Return a writable buffer of ``length`` zero bytes for a CDR message, doubles aligned.

    CDR puts every double 4 bytes (mod 8) past the message start (alignment counts from the
    end of the 4-byte header). The buffer starts 4 bytes into an 8-aligned numpy array, so
    its doubles are aligned in memory: numpy's loops on misaligned data (a ``bytes``
    object's, for one) take a slower, buffered path (about twice the time for this use).
    """
    return memoryview(np.zeros(length + 4, dtype=np.uint8))[4:]


class Template:
    """
    Preallocated output bytes: numpy views of its doubles, the stamp written in place.

    ``data``: the serialized message (a :class:`CdrWriter`'s ``buf``, or what
    ``serialize_message`` returned), copied into an aligned buffer.
    """

    def __init__(self, data, stamp_offset=None):
        self.buf = message_buffer(len(data))
        self.buf[:] = data
        self._stamp_offset = stamp_offset

    def view(self, offset, shape, strides=None):
        """Return a float64 view into the template at ``offset``; writes land in the bytes."""
        return np.ndarray(shape, dtype='<f8', buffer=self.buf, offset=offset, strides=strides)

    def set_stamp(self, stamp_bytes):
        """Copy an 8-byte CDR stamp (as read from an input) into the template."""
        o = self._stamp_offset
        self.buf[o:o + 8] = stamp_bytes

    def set_header(self, header_bytes):
        """
        Copy a whole header (stamp and frame_id, :meth:`JointStateLayout.header_bytes`) in.

        For a template whose frame_id has the same length: what the typed path does when it
        copies an input's header into its output.
        """
        o = self._stamp_offset
        self.buf[o:o + len(header_bytes)] = header_bytes

    def stamped(self, stamp_ns):
        """Return the message as ``bytes``, its stamp set to ``stamp_ns``."""
        STAMP.pack_into(self.buf, self._stamp_offset, *divmod(stamp_ns, 1_000_000_000))
        return bytes(self.buf)

    def to_bytes(self):
        """Return the message as ``bytes`` (what ``Publisher.publish`` takes)."""
        return bytes(self.buf)


class JointStateLayout:
    """
    The byte layout of JointState messages with one name list, frame_id length and sizes.

    ``frame_id`` is the one written by :meth:`encoder` and :meth:`template_bytes`; a
    message matches whatever its frame_id says, provided it has the same length.
    ``arrays(data)`` and ``block(data)`` return the arrays of a matching message as views
    of ``data``; ``header_bytes(data)`` its header (stamp and frame_id), which an output of
    the same frame_id length takes as it is (:meth:`Template.set_header`).
    """

    def __init__(self, names, frame_id, sizes, length=None):
        self.names = tuple(names)
        self.frame_id = frame_id
        self.sizes = tuple(int(s) for s in sizes)
        w = CdrWriter()
        self.stamp_offset = w.header(frame_id)
        self.header_end = len(w.buf)          # the header: stamp, frame_id length, characters
        self._frame_word = bytes(w.buf[self.stamp_offset + 8:self.stamp_offset + 12])
        self._frame_at = self.stamp_offset + 8
        w.uint32(len(self.names))
        for name in self.names:
            w.string(name)
        # The compared bytes: the encapsulation's first two, the frame_id's length, the
        # names (their count to the last name's NUL), the three counts. One unpack reads
        # the counts.
        # The frame_id's NUL onwards; its characters are checked apart (see matches).
        strings = slice(self.header_end - 1, len(w.buf))
        counts_at, offsets = [], []
        for n in self.sizes:
            counts_at.append(w.uint32(n))
            offsets.append(w.doubles(n) if n else None)
        self.offsets = tuple(offsets)
        self._counts = struct.Struct('<I' + ''.join(
            f'{b - a - 4}xI' for a, b in zip(counts_at, counts_at[1:])))
        self._counts_at = counts_at[0]
        self._writer = w
        fixed = bytearray(w.fixed)
        self._frame_chars = slice(self._frame_at + 4, self.header_end - 1)
        fixed[self._frame_chars] = bytes(self.header_end - 1 - self._frame_at - 4)
        self.fixed = bytes(fixed)           # 0xff where a byte is compared
        self._seen_frame = frame_id.encode()
        self.content_length = len(w.buf)
        self.length = self.content_length if length is None else length
        self._strings = strings
        self._strings_mask = int.from_bytes(self.fixed[strings], 'little')
        self._strings_constant = int.from_bytes(w.buf[strings], 'little') & self._strings_mask
        # The names' bytes as last matched, padding included (a sender's padding bytes are
        # whatever its buffer held, but usually the same from message to message).
        self._seen_strings = bytes(w.buf[strings])
        n = len(self.names)
        # All three arrays present (the usual case): one strided (3, n) view over the bytes.
        self.stacked = n > 0 and self.sizes == (n, n, n)
        self._stride = 8 * n + 8
        self._block = 3 * n + 2

    @classmethod
    def learn(cls, data, names, frame_id, sizes, stamp_ns, arrays):
        """
        Return the layout of the received message ``data`` decoded as the given fields, or None.

        None when the computed layout does not decode ``data`` back to exactly ``stamp_ns``
        and ``arrays`` (a serialiser with other rules): such messages stay on the typed path.
        """
        layout = cls(names, frame_id, sizes, len(data))
        if len(data) < layout.content_length or not layout.matches(data):
            return None
        if layout.stamp_ns(data) != stamp_ns or layout.header_bytes(data)[12:-1] != \
                frame_id.encode():
            return None
        for got, want in zip(layout.arrays(data), arrays):
            if got.tobytes() != np.asarray(want, dtype=np.float64).tobytes():
                return None
        return layout

    @classmethod
    def learn_message(cls, data, msg):
        """:meth:`learn` from ``msg``, the JointState message object ``data`` decodes to."""
        header = msg.header
        return cls.learn(data, msg.name, header.frame_id,
                         [len(msg.position), len(msg.velocity), len(msg.effort)],
                         header.stamp.sec * 1_000_000_000 + header.stamp.nanosec,
                         (msg.position, msg.velocity, msg.effort))

    def matches(self, data):
        """
        Return True if ``data`` has this layout's length, frame_id length, names and counts.

        The frame_id's characters may be any but a NUL, in ASCII (see the module docstring).
        The names are first compared, padding and all, with those of the last message
        that matched (one memory compare); only when that differs are they compared byte by
        byte under the mask of constant bytes, and the new bytes kept for the next message.
        """
        if (len(data) != self.length or not data.startswith(_ENCAPSULATION)
                or not data.startswith(self._frame_word, self._frame_at)
                or self._counts.unpack_from(data, self._counts_at) != self.sizes):
            return False
        if not data.startswith(self._seen_frame, self._frame_chars.start):
            # Another frame_id: taken if ASCII without a NUL, which every decoder reads as
            # these bytes (rclpy ends a string at a NUL, and reads invalid UTF-8 as U+FFFD).
            chars = data[self._frame_chars]
            if not chars.isascii() or 0 in chars:
                return False
            self._seen_frame = chars
        if data.startswith(self._seen_strings, self._strings.start):
            return True
        strings = data[self._strings]
        if int.from_bytes(strings, 'little') & self._strings_mask != self._strings_constant:
            return False
        self._seen_strings = strings
        return True

    def stamp_ns(self, data):
        """Return the header stamp of ``data`` in nanoseconds."""
        sec, nanosec = STAMP.unpack_from(data, self.stamp_offset)
        return sec * 1_000_000_000 + nanosec

    def stamp_bytes(self, data):
        """Return the 8 stamp bytes of ``data`` (to copy into an output's header)."""
        return data[self.stamp_offset:self.stamp_offset + 8]

    def header_bytes(self, data):
        """Return the header of ``data``: stamp, frame_id length and characters (with NUL)."""
        return data[self.stamp_offset:self.header_end]

    def block(self, data):
        """
        Return the three arrays of ``data`` as one float64 view, rows ``n + 1`` apart.

        Only when :attr:`stacked`. Between two rows sits the next sequence's count and
        padding (one double's room: never a value to read).
        """
        return np.frombuffer(data, '<f8', self._block, self.offsets[0])

    def arrays(self, data):
        """Return position, velocity, effort as float64 views of ``data`` (empty where empty)."""
        return [_EMPTY if o is None else np.frombuffer(data, '<f8', n, o)
                for o, n in zip(self.offsets, self.sizes)]

    def inbox(self):
        """Return an :class:`Inbox` for messages of this layout."""
        return Inbox(self)

    def template_bytes(self):
        """Return a zero-valued message of this layout (tests and probes)."""
        return bytes(self._writer.buf)

    def encoder(self):
        """Return a :class:`JointStateTemplate` for messages of this layout."""
        return JointStateTemplate(self)


class Inbox:
    """
    One input buffer for messages of a layout, read through views fixed once.

    ``take(data)`` copies a matching message in (one ``memcpy``) and returns its stamp in
    nanoseconds, or returns None and changes nothing. ``block`` (a :attr:`stacked`
    layout's, else None), ``arrays``, ``stamp`` (its 8 bytes) and ``header`` (stamp and
    frame_id) are views of the buffer: the same objects for every message, their values
    those of the last one taken. Its
    doubles are aligned in memory (:func:`message_buffer`); a received ``bytes``'s are not.
    """

    def __init__(self, layout):
        self.buf = message_buffer(layout.length)
        self.block = layout.block(self.buf) if layout.stacked else None
        self.arrays = layout.arrays(self.buf)
        at = layout.stamp_offset
        self.stamp = self.buf[at:at + 8]
        self.header = self.buf[at:layout.header_end]
        self._matches, self._stamp_ns = layout.matches, layout.stamp_ns

    def take(self, data):
        """Copy ``data`` in if it has the layout and return its stamp (ns); else None."""
        if not self._matches(data):
            return None
        self.buf[:] = data
        return self._stamp_ns(self.buf)


class JointStateTemplate(Template):
    """A JointState output: ``write(stamp, arrays)`` fills it in and returns the bytes."""

    def __init__(self, layout):
        super().__init__(layout._writer.buf, layout.stamp_offset)
        # All three arrays (the usual case): one (3, n) view, whose rows are the fields.
        self.state = (self.view(layout.offsets[0], (3, len(layout.names)),
                                (layout._stride, 8)) if layout.stacked else None)
        self.fields = (tuple(self.state) if layout.stacked else
                       tuple(None if o is None else self.view(o, (n,))
                             for o, n in zip(layout.offsets, layout.sizes)))

    def write(self, stamp_bytes, arrays):
        """Fill in the stamp and the arrays (:meth:`fill`); return the message's bytes."""
        self.set_stamp(stamp_bytes)
        self.fill(arrays)
        return self.to_bytes()

    def fill(self, arrays):
        """
        Fill in the arrays (each None or empty exactly where the layout has none).

        An array that is the field itself (already written in place) is not copied.
        """
        for field, values in zip(self.fields, arrays):
            if field is not None and field is not values:
                field[:] = values


class DoublesTemplate(Template):
    """An output whose variable part is one block of doubles (``values``) and the stamp."""

    def __init__(self, writer, stamp_offset, offset, shape):
        super().__init__(writer.buf, stamp_offset)
        self.values = self.view(offset, shape)

    @classmethod
    def pose_array(cls, frame_id, count):
        """geometry_msgs/PoseArray: ``values`` is ``(count, 7)``, position then x, y, z, w."""
        w = CdrWriter()
        stamp = w.header(frame_id)
        w.uint32(count)
        return cls(w, stamp, w.doubles(7 * count), (count, 7))

    @classmethod
    def pose_stamped(cls, frame_id):
        """geometry_msgs/PoseStamped: ``values`` is ``(7,)``."""
        w = CdrWriter()
        stamp = w.header(frame_id)
        return cls(w, stamp, w.doubles(7), (7,))

    @classmethod
    def float64(cls):
        """std_msgs/Float64: ``values`` is ``(1,)``."""
        w = CdrWriter()
        return cls(w, None, w.doubles(1), (1,))


class TransformsTemplate(Template):
    """
    tf2_msgs/TFMessage: one geometry_msgs/TransformStamped per (parent, child) frame pair.

    Every transform carries the same stamp (:meth:`set_stamp` writes it into each header)
    and ``values`` (n, 7) holds translation x, y, z and rotation x, y, z, w per transform;
    :meth:`fill` copies them into the bytes, one gather for all transforms (their blocks
    sit at offsets that the frame names' lengths decide).

    >>> t = TransformsTemplate([('base', 'arm'), ('arm', 'hand')])
    >>> t.values[:] = [[1, 2, 3, 0, 0, 0, 1], [0, 0, 0.5, 0, 0, 1, 0]]
    >>> t.fill(); t.set_stamp(bytes([5, 0, 0, 0, 9, 0, 0, 0]))
    >>> len(t.to_bytes())
    180
    """

    def __init__(self, pairs):
        w = CdrWriter()
        w.uint32(len(pairs))
        stamps, blocks = [], []
        for parent, child in pairs:
            stamps.append(w.header(parent))
            w.string(child)
            blocks.append(w.doubles(7))
        super().__init__(w.buf)
        body = len(self.buf) - 4          # doubles and words counted from the CDR origin
        self._doubles = self.view(4, (body // 8,))
        self._words = np.ndarray((body // 4,), dtype='<u4', buffer=self.buf, offset=4)
        self._value_at = (np.array(blocks, dtype=np.intp).reshape(-1, 1) - 4) // 8 \
            + np.arange(7)
        self._stamp_at = (np.array(stamps, dtype=np.intp).reshape(-1, 1) - 4) // 4 \
            + np.arange(2)
        self.values = np.zeros((len(pairs), 7))
        self.values[:, 6] = 1.0

    def set_stamp(self, stamp_bytes):
        """Write the 8-byte CDR stamp into every transform's header."""
        self._words[self._stamp_at] = np.frombuffer(stamp_bytes, dtype='<u4')

    def fill(self):
        """Copy :attr:`values` into the message's bytes."""
        self._doubles[self._value_at] = self.values
