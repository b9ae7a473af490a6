"""
A bag's JointState topic as arrays: what both identifications read (static and dynamic).

:func:`read_states` returns the stamps and the positions, velocities and efforts of the
names asked for, NaN where a message lacks one; one layout decodes as one array
(:func:`.joint_state_cdr.batch_decode`). Refusals name the bag (:class:`.errors.BagError`).
"""

import numpy as np

from .errors import BagError
from .io import iter_messages, open_reader, typestore
from .joint_state_cdr import batch_decode


def read_states(bag, topic, names, units=None):
    """
    Return ``(stamps s, values (N, 3, len(names)))``: positions, velocities, efforts of ``names``.

    NaN where a message had no such name or field. ``units``: the driver units of the
    actuators ``names`` (a set's :class:`~..transmissions.units.UnitTable`, its order), whose
    values are returned in SI. Raises BagError naming the bag when it cannot be read, has no
    message on ``topic``, none naming any of ``names``, or no efforts.
    """
    stamps, values = _read_states(bag, topic, names)
    if units is not None and not units.identity:
        values = units.states_to_si(values)
    return stamps, values


def _read_states(bag, topic, names):
    """Return :func:`read_states`' arrays as the bag holds them."""
    index = {n: i for i, n in enumerate(names)}
    store = typestore()
    reader = open_reader(bag)
    try:
        connections = [c for c in reader.connections if c.topic == topic]
        if not connections:
            raise BagError(f'{bag}: no {topic} messages (topics: '
                           f'{", ".join(sorted({c.topic for c in reader.connections}))})')
        messages = [(c.msgtype, log_ns, raw) for c, log_ns, raw in
                    iter_messages(reader, connections)]
    finally:
        reader.close()
    raws = [bytes(raw) for _, _, raw in messages]
    batch = batch_decode(store, raws) if all(
        t == 'sensor_msgs/msg/JointState' for t, _, _ in messages) else None
    if batch is not None:                   # one layout: the whole topic as one array
        first, stamps_ns, arrays = batch
        seen = tuple(first.name)
        stamps = np.where(stamps_ns > 0, stamps_ns, [log for _, log, _ in messages]) * 1e-9
        values = np.full((len(raws), 3, len(names)), np.nan)
        pairs = [(k, index[n]) for k, n in enumerate(seen) if n in index]
        for field, array in enumerate(arrays):
            if array is not None and pairs:
                src, dst = map(list, zip(*pairs))
                values[:, field, dst] = array[:, src]
        return _checked(bag, topic, names, set(seen), stamps, values)
    stamps, rows, seen = [], [], set()
    for msgtype, log_ns, raw in messages:
        msg = store.deserialize_cdr(raw, msgtype)
        row = np.full((3, len(names)), np.nan)
        seen.update(msg.name)
        for field, values in enumerate((msg.position, msg.velocity, msg.effort)):
            if len(values) == len(msg.name):
                for name, value in zip(msg.name, values):
                    if name in index:
                        row[field, index[name]] = value
        stamp = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        stamps.append(stamp if stamp > 0 else log_ns * 1e-9)
        rows.append(row)
    return _checked(bag, topic, names, seen, np.array(stamps),
                    np.array(rows).reshape(-1, 3, len(names)))


def _checked(bag, topic, names, seen, stamps, values):
    """Return ``(stamps, values)``, or BagError when they name none of ``names`` or no effort."""
    if not seen & set(names):
        raise BagError(f'{bag}: the {topic} messages name none of {", ".join(names[:4])}'
                       f'{", ..." if len(names) > 4 else ""} (they name '
                       f'{", ".join(sorted(seen)[:4]) or "nothing"}): another robot?')
    if not np.isfinite(values[:, 2]).any():
        raise BagError(f'{bag}: the {topic} messages carry no efforts')
    return stamps, values
