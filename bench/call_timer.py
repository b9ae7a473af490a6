"""Time SetParameters and Trigger calls to the bridge from a process of their own (bench helper).

Usage: call_timer.py NAMESPACE JOINT SECONDS
What ``ros2 param set`` and ``ros2 service call`` are: a separate process whose executor
serves nothing but the calls. Every 0.2 s from 1.5 s on, until SECONDS are over, it sets
``joints.JOINT.damping`` and calls ``~/calibrate_to_default_pose``, each waited for up to
5 s, and prints one JSON line: the latencies in ms (``param_ms``, ``service_ms``) and the
number of calls ``unanswered``. (In the process that also receives the 10 kHz joint_states,
a reply waited behind those messages in the same executor: that measured the receiver.)
"""

import json
import sys
import time

from rcl_interfaces.srv import SetParameters
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from std_srvs.srv import Trigger

START_S = 1.5           # the load generator's own start-up (it waits 1 s for its subscriber)
PERIOD_S = 0.2
ANSWER_S = 5.0


def main():
    """Call until the time is up; print the latencies as JSON."""
    ns, joint, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    rclpy.init(args=[])
    node = rclpy.create_node('call_timer', namespace=ns)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    set_client = node.create_client(SetParameters, 'transmission_bridge/set_parameters')
    srv_client = node.create_client(Trigger, 'transmission_bridge/calibrate_to_default_pose')
    begin = time.monotonic()
    while not (set_client.service_is_ready() and srv_client.service_is_ready()) and \
            time.monotonic() < begin + 20:
        executor.spin_once(timeout_sec=0.05)
    result = {'param_ms': [], 'service_ms': [], 'unanswered': 0}
    end, next_call, k = begin + seconds, begin + START_S, 0
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=max(0.0, min(next_call - time.monotonic(), 0.05)))
        if time.monotonic() < next_call:
            continue
        k += 1
        damping = Parameter(f'joints.{joint}.damping', value=0.1 * (k % 5)).to_parameter_msg()
        for client, request, box in (
                (set_client, SetParameters.Request(parameters=[damping]), 'param_ms'),
                (srv_client, Trigger.Request(), 'service_ms')):
            start = time.monotonic()
            future = client.call_async(request)
            executor.spin_until_future_complete(future, timeout_sec=ANSWER_S)
            if future.done():
                result[box].append((time.monotonic() - start) * 1e3)
            else:
                client.remove_pending_request(future)
                result['unanswered'] += 1
        next_call = time.monotonic() + PERIOD_S
    print(json.dumps(result), flush=True)
    node.destroy_node()
    rclpy.shutdown()


if __name__ == '__main__':
    main()
