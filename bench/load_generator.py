"""Publish JointState messages at a fixed rate with send timestamps (bench helper process).

Usage: load_generator.py TOPIC NAMES_FILE RATE_HZ SECONDS [SETTLE_S]
NAMES_FILE holds the names on its first line and, optionally, the positions to send on its
second (a robot whose transmissions refuse arbitrary positions: a linkage); otherwise the
values are random.
Sending starts SETTLE_S (default 1) seconds after the first subscriber has matched.
The header stamp is the wall-clock send time (unique: it also identifies the message). The
message is serialised once; each send writes the stamp into those bytes and publishes them,
so the generator itself costs what a raw publish costs (at 5-10 kHz a generator that builds
message objects is the bottleneck, not the node under test). Prints the number of messages
sent when done.
"""

import struct
import sys
import time

import numpy as np
import rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState

STAMP = struct.Struct('<iI')
STAMP_OFFSET = 4                   # CDR: after the 4-byte encapsulation header, header first
# The last SPIN_S before a send is busy-waited, for a punctual send at up to a few kHz. At
# higher rates the period is shorter than that: the generator only sleeps (the kernel wakes it
# some 60 us late, and what is due is sent at once), else it spins a whole core the node under
# test then lacks (make stress: the flooded bridge's executor ran a third of the time).
SPIN_S = 0.0003


def main():
    """Publish until the time is up."""
    topic, names_file, rate, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3]), \
        float(sys.argv[4])
    settle = float(sys.argv[5]) if len(sys.argv) > 5 else 1.0
    lines = open(names_file).read().split('\n')
    names = lines[0].split()
    given = [float(x) for x in lines[1].split()] if len(lines) > 1 and lines[1].strip() else None
    rclpy.init(args=[])
    node = rclpy.create_node('load_generator')
    pub = node.create_publisher(JointState, topic,
                                QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE))
    deadline = time.monotonic() + 10.0
    while pub.get_subscription_count() == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(settle)                 # let both ends match before measuring
    rng = np.random.default_rng(0)
    values = [rng.normal(size=len(names)).tolist() for _ in range(3)]
    if given is not None:
        values[0] = given
    msg = JointState(name=names, position=values[0], velocity=values[1], effort=values[2])
    msg.header.frame_id = 'motors'
    buf = bytearray(serialize_message(msg))
    period = 1.0 / rate
    count = int(rate * seconds)
    start = time.perf_counter()
    spin = SPIN_S if period > SPIN_S else 0.0
    for k in range(count):
        target = start + k * period
        ahead = target - time.perf_counter()
        if ahead > spin:
            time.sleep(ahead - spin)         # sleep most of the period: 2 cores are shared
        while time.perf_counter() < target:
            pass
        STAMP.pack_into(buf, STAMP_OFFSET, *divmod(time.time_ns(), 1_000_000_000))
        pub.publish(bytes(buf))
    time.sleep(0.5)
    print(count, flush=True)
    node.destroy_node()
    rclpy.shutdown()


if __name__ == '__main__':
    main()
