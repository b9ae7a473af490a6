"""Conversions between ROS messages and the arrays the libraries take."""

import array

from builtin_interfaces.msg import Time


def stamp_to_ns(stamp):
    """Return a builtin_interfaces/Time as integer nanoseconds."""
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def ns_to_stamp(ns):
    """Return integer nanoseconds as a builtin_interfaces/Time."""
    sec, nanosec = divmod(int(ns), 1_000_000_000)
    return Time(sec=sec, nanosec=nanosec)


def doubles(values):
    """Return a float64 numpy array (or None) as an ``array('d')`` a message field takes fast."""
    if values is None:
        return array.array('d')
    return array.array('d', values.tobytes())
