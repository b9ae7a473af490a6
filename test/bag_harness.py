"""Run the bag tools as processes and read bags back with rosbags, for the bag tests."""

import signal
import subprocess
import sys

import numpy as np
from transmission_bridge.bag import io
from transmission_bridge.bag.joint_state_cdr import MSGTYPE


def tool(name, *args, timeout=120, **kwargs):
    """Run ``python -m transmission_bridge.tools.<name> args``; return the CompletedProcess."""
    return subprocess.run([sys.executable, '-m', f'transmission_bridge.tools.{name}', *map(
        str, args)], capture_output=True, text=True, timeout=timeout, **kwargs)


def like_a_terminal():
    """
    Give a child Ctrl-C's default action (``preexec_fn``), as a terminal's shell does.

    A background job of a shell without job control (``make test &`` in a script) starts
    with SIGINT ignored, which its children inherit; Python then installs no handler and
    a SIGINT raises no KeyboardInterrupt. The tests send SIGINT as a user's Ctrl-C.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_tool(name, *args, log):
    """Start a tool in the background, output to ``log``; return the Popen."""
    return subprocess.Popen([sys.executable, '-u', '-m', f'transmission_bridge.tools.{name}',
                             *map(str, args)], stdout=open(log, 'w'), stderr=subprocess.STDOUT,
                            preexec_fn=like_a_terminal)


def joint_states(path, topic):
    """Return {stamp_ns: (frame_id, names, position, velocity, effort)} of ``topic``."""
    ts = io.typestore()
    reader = io.open_reader(path)
    out = {}
    try:
        conns = [c for c in reader.connections if c.topic == topic]
        for _, _, raw in io.iter_messages(reader, conns):
            m = ts.deserialize_cdr(raw, MSGTYPE)
            stamp = m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec
            out.setdefault(stamp, []).append((m.header.frame_id, tuple(m.name),
                                              np.array(m.position), np.array(m.velocity),
                                              np.array(m.effort)))
    finally:
        reader.close()
    return out


def topics(path):
    """Return {topic: message count} of a bag."""
    reader = io.open_reader(path)
    try:
        return {c.topic: c.msgcount for c in reader.connections}
    finally:
        reader.close()
