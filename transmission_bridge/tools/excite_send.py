"""
The ROS side of ``transmission_bridge_identify excite --send``: send the goal, record meanwhile.

One rclpy node: it reads the measured pose from ``joint_states``, subscribes (serialized,
with the publishers' reliability) to the topics to record, sends the goal to the
FollowJointTrajectory action as MoveIt's controller handle does (an ``ActionClient``), and
keeps every message received from the goal's acceptance to its result. The bag is written
only when the goal succeeded.
"""

import time

import numpy as np

SERVER_TIMEOUT = 10.0       # s to find the action server, the topics' publishers, a pose


class Sender:
    """A node that sends one goal to ``action`` and records ``topics`` while it runs."""

    def __init__(self, action, topics, namespace=''):
        import rclpy
        from rclpy.action import ActionClient
        from rclpy.signals import SignalHandlerOptions
        from control_msgs.action import FollowJointTrajectory
        from sensor_msgs.msg import JointState
        rclpy.init(args=[], signal_handler_options=SignalHandlerOptions.NO)
        self.node = rclpy.create_node('transmission_bridge_excite', namespace=namespace or None)
        self.executor = rclpy.executors.SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.client = ActionClient(self.node, FollowJointTrajectory, action)
        self.action_type, self.action = FollowJointTrajectory, action
        self.topics = [self.node.resolve_topic_name(t) for t in topics]
        self.latest = None
        self.node.create_subscription(JointState, 'joint_states', self._pose, 10)
        self.recording, self.messages, self._subs = False, [], []

    def _pose(self, msg):
        self.latest = msg

    def measured_pose(self, names):
        """Return the positions of ``names`` from ``joint_states``, or None within the wait."""
        end = time.monotonic() + SERVER_TIMEOUT
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.05)
            msg = self.latest
            if msg is not None and len(msg.position) == len(msg.name) and set(names) <= set(
                    msg.name):
                index = {n: i for i, n in enumerate(msg.name)}
                return np.array([msg.position[index[n]] for n in names])
        return None

    def run(self, goal_text, bag, duration):
        """Send the goal; return ``(error_code, message)``; write ``bag`` on success."""
        import yaml
        from rclpy.qos import QoSProfile
        from .record import _reliability
        from .ros_types import message_class
        if not self.client.wait_for_server(timeout_sec=SERVER_TIMEOUT):
            return -1, f'no action server {self.action} within {SERVER_TIMEOUT:g} s'
        types = {}
        end = time.monotonic() + SERVER_TIMEOUT
        while time.monotonic() < end and len(types) < len(self.topics):
            for topic in self.topics:
                infos = self.node.get_publishers_info_by_topic(topic)
                if infos:
                    types[topic] = (infos[0].topic_type, _reliability(infos))
            self.executor.spin_once(timeout_sec=0.05)
        missing = [t for t in self.topics if t not in types]
        if missing:
            return -1, f'no publisher on {", ".join(missing)}'
        for topic, (msgtype, reliability) in types.items():
            def store(raw, topic=topic):
                if self.recording:
                    self.messages.append((topic, self.node.get_clock().now().nanoseconds, raw))
            self._subs.append(self.node.create_subscription(
                message_class(msgtype), topic, store,
                QoSProfile(depth=1000, reliability=reliability), raw=True))
        goal = self._goal(yaml.safe_load(goal_text))
        self.recording = True
        future = self.client.send_goal_async(goal)
        handle = self._wait(future, SERVER_TIMEOUT)
        if handle is None or not handle.accepted:
            return -1, 'the goal was rejected' if handle is not None else 'no answer to the goal'
        result = self._wait(handle.get_result_async(), duration + 30.0)
        self.recording = False
        if result is None:
            return -1, "no result within the trajectory's duration and 30 s"
        code, message = result.result.error_code, result.result.error_string
        if code != 0:
            return code, f'error_code {code}: {message}'
        self._write(bag, types)
        return 0, message

    def _goal(self, data):
        from builtin_interfaces.msg import Duration
        from trajectory_msgs.msg import JointTrajectoryPoint
        goal = self.action_type.Goal()
        goal.trajectory.joint_names = list(data['trajectory']['joint_names'])
        for point in data['trajectory']['points']:
            goal.trajectory.points.append(JointTrajectoryPoint(
                positions=[float(x) for x in point['positions']],
                velocities=[float(x) for x in point['velocities']],
                accelerations=[float(x) for x in point['accelerations']],
                effort=[float(x) for x in point.get('effort', [])],
                time_from_start=Duration(sec=int(point['time_from_start']['sec']),
                                         nanosec=int(point['time_from_start']['nanosec']))))
        return goal

    def _wait(self, future, timeout):
        end = time.monotonic() + timeout
        while not future.done() and time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.05)
        return future.result() if future.done() else None

    def _write(self, bag, types):
        from ..bag import io
        ts = io.typestore()
        with io.atomic_writer(bag) as writer:
            connections = {t: writer.add_connection(t, msgtype, typestore=ts)
                           for t, (msgtype, _) in types.items()}
            for topic, stamp, raw in self.messages:
                writer.write(connections[topic], stamp, bytes(raw))

    def close(self):
        """Shut the node down."""
        import rclpy
        self.client.destroy()
        self.node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
