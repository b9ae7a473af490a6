"""Publish JointState messages at a fixed rate with send timestamps (bench helper process).

Usage: load_generator.py TOPIC NAMES_FILE RATE_HZ SECONDS
The header stamp is the wall-clock send time (unique: it also identifies the message). Prints
the number of messages sent when done.
"""

import sys
import time

import numpy as np
import rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState


def main():
    """Publish until the time is up."""
    topic, names_file, rate, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3]), \
        float(sys.argv[4])
    names = open(names_file).read().split()
    rclpy.init(args=[])
    node = rclpy.create_node('load_generator')
    pub = node.create_publisher(JointState, topic,
                                QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE))
    deadline = time.monotonic() + 10.0
    while pub.get_subscription_count() == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(1.0)                    # let both ends match before measuring
    rng = np.random.default_rng(0)
    values = [rng.normal(size=len(names)).tolist() for _ in range(3)]
    msg = JointState(name=names, position=values[0], velocity=values[1], effort=values[2])
    period = 1.0 / rate
    count = int(rate * seconds)
    start = time.perf_counter()
    for k in range(count):
        target = start + k * period
        ahead = target - time.perf_counter()
        if ahead > 0.0003:
            time.sleep(ahead - 0.0003)       # sleep most of the period: 2 cores are shared
        while time.perf_counter() < target:
            pass
        now = time.time_ns()
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(now, 1_000_000_000)
        msg.header.frame_id = str(k)
        pub.publish(msg)
    time.sleep(0.5)
    print(count, flush=True)
    node.destroy_node()
    rclpy.shutdown()


if __name__ == '__main__':
    main()
