"""
Run the package's nodes as real processes and talk to them over DDS, as the ROS CLI does.

Isolation: discovery stays on loopback (ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST),
the run uses one ROS_DOMAIN_ID of its own (conftest.choose_test_domain, never the
caller's), and
every test puts its nodes in a namespace of its own (pid + counter), so neither
tests nor parallel runs ever see each other's topics.
"""

import contextlib
import itertools
import os
import signal
import subprocess
import sys
import time

import conftest  # noqa: F401  (sets this run's own ROS_DOMAIN_ID and loopback discovery)
from rcl_interfaces.srv import GetParameters, SetParameters, SetParametersAtomically
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter, parameter_value_to_python
from sensor_msgs.msg import JointState


DOMAIN_ID = int(os.environ['ROS_DOMAIN_ID'])
_counter = itertools.count()


def unique_namespace(tag):
    """Return a namespace no other test or run uses."""
    return f'/{tag}_{os.getpid()}_{next(_counter)}'


class NodeProcess:
    """A node started as its own process: ``python -m module --ros-args ...``."""

    def __init__(self, module, ros_args, log_path, env=None):
        self.log_path = log_path
        self._log = open(log_path, 'w')
        cmd = [sys.executable, '-u', '-m', module, '--ros-args', *ros_args]
        full_env = dict(os.environ, PYTHONUNBUFFERED='1', RCUTILS_LOGGING_BUFFERED_STREAM='0')
        full_env.update(env or {})
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT,
                                     env=full_env)

    def output(self):
        """Return everything the process printed so far."""
        if not self._log.closed:
            self._log.flush()
        with open(self.log_path) as f:
            return f.read()

    def alive(self):
        """Return True while the process runs."""
        return self.proc.poll() is None

    def stop(self, sig=signal.SIGINT, timeout=10.0):
        """Send ``sig``, wait for the exit, and return the exit code."""
        if self.alive():
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        return self.proc.returncode


class Graph:
    """A test-side rclpy node in its own context, with helpers to wait, call and collect."""

    def __init__(self, namespace):
        self.namespace = namespace
        conftest.MADE_NODES.append(self)
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=DOMAIN_ID)
        self.node = rclpy.create_node('tester', namespace=namespace, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._clients = {}

    def close(self):
        """Destroy the node (its action clients first) and shut the context down."""
        self.executor.shutdown()
        for waitable in list(self.node.waitables):
            getattr(waitable, 'destroy', lambda: None)()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)

    def spin_for(self, seconds):
        """Process callbacks for ``seconds``."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=min(0.02, max(0.0, end - time.monotonic())))

    def spin_until(self, predicate, timeout=10.0, action=None, period=0.05):
        """Spin until ``predicate()`` holds; call ``action()`` every ``period`` meanwhile."""
        end = time.monotonic() + timeout
        next_action = 0.0
        while time.monotonic() < end:
            if predicate():
                return True
            if action is not None and time.monotonic() >= next_action:
                action()
                next_action = time.monotonic() + period
            self.executor.spin_once(timeout_sec=0.01)
        return predicate()

    def has_node(self, name):
        """Return True once a node called ``name`` is on the graph in this namespace."""
        return (name, self.namespace) in self.node.get_node_names_and_namespaces()

    def collect(self, msg_type, topic, qos=10):
        """Subscribe to ``topic``; return the list the messages are appended to."""
        box = []
        self.node.create_subscription(msg_type, topic, box.append, qos)
        return box

    def call(self, srv_type, name, request=None, timeout=10.0, resend=2.0):
        """
        Call a service (waiting for it to appear) and return the response.

        One client per service lives as long as the graph. Until an answer comes, the
        request goes out again every ``resend`` seconds: a Fast DDS service whose response
        writer has not yet matched a new client's reader waits 100 ms, logs "failed to send
        response (timeout)" and drops the answer (ros2/rmw_fastrtps#392, #842), which a
        loaded 2-core machine hits now and then. Every service the tests call is idempotent
        (parameters, std_srvs/Trigger), so a repeated request changes nothing.
        """
        client = self._clients.get((srv_type, name))
        if client is None:
            client = self.node.create_client(srv_type, name)
            self._clients[(srv_type, name)] = client
        assert self.spin_until(client.service_is_ready, timeout), f'no service {name}'
        request = request if request is not None else srv_type.Request()
        futures = []

        def answered():
            return any(f.done() for f in futures)

        def send():
            futures.append(client.call_async(request))

        assert self.spin_until(answered, timeout, action=send, period=resend), \
            f'{name} did not answer {len(futures)} requests in {timeout} s'
        return next(f for f in futures if f.done()).result()

    def set_parameters(self, node_name, values, atomically=False):
        """Set parameters the way ``ros2 param set`` does; return the SetParametersResult(s)."""
        params = [Parameter(k, value=v).to_parameter_msg() for k, v in values.items()]
        if atomically:
            req = SetParametersAtomically.Request(parameters=params)
            return self.call(SetParametersAtomically, f'{node_name}/set_parameters_atomically',
                             req).result
        req = SetParameters.Request(parameters=params)
        return self.call(SetParameters, f'{node_name}/set_parameters', req).results

    def get_parameters(self, node_name, names):
        """Return {name: value} as ``ros2 param get`` reads it."""
        req = GetParameters.Request(names=list(names))
        res = self.call(GetParameters, f'{node_name}/get_parameters', req)
        return {n: parameter_value_to_python(v) for n, v in zip(names, res.values)}


class InProcessBridge:
    """A bridge node in this process, spun only when the test says."""

    def __init__(self, namespace, params):
        from transmission_bridge.bridge.node import TransmissionBridge
        conftest.MADE_NODES.append(self)
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=DOMAIN_ID,
                   args=['--ros-args', '--log-level', 'error'])
        self.node = TransmissionBridge(
            namespace=namespace, context=self.context,
            parameter_overrides=[Parameter(k, value=v) for k, v in params.items()])
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)

    def spin_for(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.005)

    def run_with(self, graph, seconds, each=None, period=0.005):
        """Spin this bridge and ``graph`` in turn for ``seconds``; ``each()`` every ``period``."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if each is not None:
                each()
            self.spin_for(period)
            graph.executor.spin_once(timeout_sec=0.0)

    def wait_for(self, graph, publisher, client, timeout=15):
        """Spin both until ``publisher`` reaches the bridge and ``client``'s server is up."""
        def ready():
            self.run_with(graph, 0.01)
            return publisher.get_subscription_count() and client.server_is_ready()
        return graph.spin_until(ready, timeout=timeout)

    def close(self):
        """Destroy the bridge, then shut its context down."""
        self.node.destroy_node()        # first: a goal it ends is ended on a live executor
        self.executor.shutdown()
        rclpy.shutdown(context=self.context)


def publish_still(node, publisher, tset, theta):
    """Publish one actuator state of ``tset``'s motors at ``theta``, at rest, stamped now."""
    msg = JointState(name=list(tset.actuator_names), position=list(map(float, theta)),
                     velocity=[0.0] * tset.num_actuators, effort=[0.0] * tset.num_actuators)
    msg.header.stamp = node.get_clock().now().to_msg()
    publisher.publish(msg)


def latest_status(diagnostics, node):
    """
    Return the newest DiagnosticStatus ``node`` published (its name is ``'<node>: ...'``).

    Several nodes may share one remapped ``/diagnostics``: the last message is whichever
    spoke last, so a test picks its node's status by name. None before the first.
    """
    for msg in reversed(diagnostics):
        for status in msg.status:
            if status.name.split(':')[0] == node:
                return status
    return None


def status_values(diagnostics, node):
    """Return {key: value} of ``node``'s newest status ({} before the first)."""
    status = latest_status(diagnostics, node)
    return {} if status is None else {kv.key: kv.value for kv in status.values}


@contextlib.contextmanager
def started_node(tmp_path, module, node, params, tag, ready_topic):
    """
    Start ``module``'s node with ``params`` in a params file, as a user would; yield its Graph.

    In a namespace of its own, /diagnostics remapped into it. Ready once the node
    subscribes ``ready_topic``. On leaving: the node stopped with Ctrl-C, which must end
    it with code 0 and no traceback. ``graph.proc`` is the process.
    """
    import yaml
    ns = unique_namespace(tag)
    params_file = tmp_path / f'{tag}_params.yaml'
    params_file.write_text(yaml.safe_dump({f'/**/{node}': {'ros__parameters': params}}))
    proc = NodeProcess(module, ['--params-file', str(params_file), '-r', f'__ns:={ns}',
                                '-r', f'/diagnostics:={ns}/diagnostics'], tmp_path / 'node.log')
    graph = Graph(ns)
    graph.proc = proc
    try:
        assert graph.spin_until(lambda: graph.node.count_subscribers(ready_topic) > 0,
                                timeout=15), proc.output()
        yield graph
    finally:
        graph.close()
        assert proc.stop() == 0, proc.output()
        assert 'Traceback' not in proc.output()
