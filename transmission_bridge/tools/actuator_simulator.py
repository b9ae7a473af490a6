"""
``actuator_simulator``: publishes actuator states of a robot moving smoothly in joint space.

For demos and tests without hardware: each joint follows
``q = default + amplitude * sin(2 pi f t + phase)``; the library maps the joint
motion to actuator space (joint_to_actuator), so a bridge on the same file gives
back exactly that motion.
"""

import math

import numpy as np
import rclpy
from rclpy.node import Node
from sensor_msgs.msg import JointState

from ..ros.conversions import doubles
from ..ros.node_main import exit_with, run_node, StartupError
from ..ros.parameters import declare
from ..transmissions import ConfigError, load_transmissions


def joint_motion(tset, t):
    """Joint position and velocity at time ``t`` (s): a slow sinusoid about the defaults."""
    k = np.arange(tset.num_joints)
    amplitude, omega, phase = 0.3, 2.0 * math.pi * 0.25, 0.7 * k
    q = tset.default_positions + amplitude * np.sin(omega * t + phase)
    v = amplitude * omega * np.cos(omega * t + phase)
    return q, v


class ActuatorSimulator(Node):
    """Publishes ``actuator_states`` at ``rate`` Hz."""

    NODE_NAME = 'actuator_simulator'

    def __init__(self):
        super().__init__(self.NODE_NAME)
        path = declare(self, 'transmissions_file', '', str, 'transmissions YAML', read_only=True)
        rate = declare(self, 'rate', 100.0, float, 'publishing rate, Hz', read_only=True)
        try:
            self._tset = load_transmissions(path)
        except ConfigError as exc:
            raise StartupError(str(exc)) from None
        if not (math.isfinite(rate) and rate > 0):
            raise StartupError(f'rate must be > 0, got {rate}')
        self._pub = self.create_publisher(JointState, 'actuator_states', 10)
        self._t0 = self.get_clock().now()
        self.create_timer(1.0 / rate, self._tick)

    def _tick(self):
        now = self.get_clock().now()
        t = (now - self._t0).nanoseconds * 1e-9
        q, v = joint_motion(self._tset, t)
        msg = JointState()
        msg.header.stamp = now.to_msg()
        msg.name = list(self._tset.actuator_names)
        msg.position = doubles(self._tset.joint_to_actuator('position', q))
        msg.velocity = doubles(self._tset.joint_to_actuator('velocity', v))
        msg.effort = doubles(np.zeros(self._tset.num_actuators))
        self._pub.publish(msg)


def main(args=None):
    """Entry point of ``actuator_simulator``."""
    exit_with(run_node(ActuatorSimulator, args))


if __name__ == '__main__':
    rclpy.logging.get_logger('actuator_simulator')
    main()
