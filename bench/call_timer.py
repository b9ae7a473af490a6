"""Time SetParameters and Trigger calls to bridges from a process of their own (bench helper).

Usage: call_timer.py JOINT SECONDS NAMESPACE [NAMESPACE ...]
What ``ros2 param set`` and ``ros2 service call`` are: a separate process whose executor
serves nothing but the calls. Every 0.2 s from 1.5 s on, until SECONDS are over, it sets
``joints.JOINT.damping`` on the bridge in each NAMESPACE and calls its
``~/calibrate_to_default_pose``, each waited for up to 5 s; the bridges take turns going
first. It prints one JSON line, per namespace: the latencies in ms (``param_ms``,
``service_ms``), the number of calls ``unanswered`` and of those answered but ``refused``
(each refusal's reason goes to stderr). ``make stress`` passes the flooded bridge and an idle
one, so the idle one's figures are what a call costs on this machine under the same load,
side by side. (In the process that also receives the 10 kHz joint_states, a reply waited
behind those messages in the same executor: that measured the receiver.)
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
    joint, seconds, namespaces = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
    rclpy.init(args=[])
    node = rclpy.create_node('call_timer')
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    clients = {ns: (node.create_client(SetParameters, f'{ns}/transmission_bridge/set_parameters'),
                    node.create_client(Trigger,
                                       f'{ns}/transmission_bridge/calibrate_to_default_pose'))
               for ns in namespaces}
    begin = time.monotonic()
    while not all(c.service_is_ready() for pair in clients.values() for c in pair) and \
            time.monotonic() < begin + 20:
        executor.spin_once(timeout_sec=0.05)
    result = {ns: {'param_ms': [], 'service_ms': [], 'unanswered': 0, 'refused': 0}
              for ns in namespaces}
    end, next_call, k = begin + seconds, begin + START_S, 0
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=max(0.0, min(next_call - time.monotonic(), 0.05)))
        if time.monotonic() < next_call:
            continue
        k += 1
        damping = Parameter(f'joints.{joint}.damping', value=0.1 * (k % 5)).to_parameter_msg()
        turn = namespaces[k % len(namespaces):] + namespaces[:k % len(namespaces)]
        for ns in turn:
            set_client, srv_client = clients[ns]
            for client, request, box in (
                    (set_client, SetParameters.Request(parameters=[damping]), 'param_ms'),
                    (srv_client, Trigger.Request(), 'service_ms')):
                start = time.monotonic()
                future = client.call_async(request)
                executor.spin_until_future_complete(future, timeout_sec=ANSWER_S)
                if future.done():
                    result[ns][box].append((time.monotonic() - start) * 1e3)
                    answer = future.result()
                    ok, why = ((answer.results[0].successful, answer.results[0].reason)
                               if box == 'param_ms' else (answer.success, answer.message))
                    if not ok:
                        result[ns]['refused'] += 1
                        print(f'{ns} {box}: refused: {why}', file=sys.stderr, flush=True)
                else:
                    client.remove_pending_request(future)
                    result[ns]['unanswered'] += 1
        next_call = time.monotonic() + PERIOD_S
    print(json.dumps(result), flush=True)
    node.destroy_node()
    rclpy.shutdown()


if __name__ == '__main__':
    main()
