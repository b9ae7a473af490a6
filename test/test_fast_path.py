"""
The nodes' two paths give the same bytes: fast (bytes in, byte templates out) and typed.

Two real nodes of each kind are built in-process (real rclpy, not spun): one with
``fast_path`` on (the default), one with it off, so every message is decoded and every
output a message object. The same seeded random streams go through both: two topics,
subsets of actuators, reordered and unknown names, NaN and inf, stamps going back, a
changed frame_id, missing arrays, mismatched lengths, duplicate names, and parameter
changes mid-stream. A typed output is serialised by the rosbags library (its own CDR
writer, zero padding), a fast output is compared with those bytes as it is: identical.
The typed node's outputs are also the pre-issue-12 behaviour the rest of the suite pins.
"""

import gc
import time

from conftest import CONFIG
import numpy as np
import pytest
import rclpy
from rclpy.parameter import Parameter
from rclpy.serialization import deserialize_message, serialize_message
from ros_harness import DOMAIN_ID
from sensor_msgs.msg import JointState
from transmission_bridge.bag import io
from transmission_bridge.bag.joint_state_cdr import build
from transmission_bridge.bridge.node import TransmissionBridge
from transmission_bridge.kinematics_node.node import KinematicsNode, OUTPUTS
from transmission_bridge.ros.conversions import now_ns_function
from transmission_bridge.ros.node_main import StartupError
from transmission_bridge.transmissions import load_transmissions

TS = load_transmissions(CONFIG / 'example_robot_transmissions.yaml')
STORE = io.typestore()
TOPICS = ('actuator_states', 'wrist_states')
MESSAGES = 1500             # per stream
FAST_SHARE = 0.5            # at least this share of the outputs must come from the fast path


_NODES = []


@pytest.fixture
def context():
    ctx = rclpy.Context()
    rclpy.init(context=ctx, domain_id=DOMAIN_ID)
    yield ctx
    # Every node goes before its context: a node left to the garbage collector after
    # shutdown crashes whichever process collects it (pytest, or a child it forks later).
    while _NODES:
        _NODES.pop().destroy_node()
    gc.collect()            # a node whose constructor raised is only reachable by the collector
    rclpy.shutdown(context=ctx)


def _pair(cls, context, params, listen=True):
    nodes = [cls(context=context, namespace=f'/{label}', parameter_overrides=[
        *(Parameter(k, value=v) for k, v in params.items()),
        Parameter('fast_path', value=fast)]) for fast, label in ((True, 'fast'), (False, 'typed'))]
    _NODES.extend(nodes)
    if cls is KinematicsNode and listen:    # it computes only the outputs someone reads
        for node in nodes:
            _listen(node, context)
    return nodes


def _listen(node, context, outputs=None):
    """
    Subscribe a reader (another node, not spun) to the outputs of ``node``; wait for it.

    ``outputs``: the topics' last names (default: every output of a joint_states message).
    """
    reader = rclpy.create_node(f'reader_{len(_NODES)}', context=context)
    _NODES.append(reader)
    publishers = [p for p in node.publishers
                  if p.topic_name.startswith(node.get_fully_qualified_name() + '/')
                  and not p.topic_name.endswith(('trajectory_out', 'default_joint_states'))
                  or p.topic_name == '/tf']
    if outputs is not None:
        publishers = [p for p in publishers if p.topic_name.split('/')[-1] in outputs]
    for pub in publishers:
        reader.create_subscription(pub.msg_type, pub.topic_name, lambda _: None, 10, raw=True)
    end = time.monotonic() + 10.0
    while time.monotonic() < end and not all(p.get_subscription_count() for p in publishers):
        time.sleep(0.01)
    assert all(p.get_subscription_count() for p in publishers), [p.topic_name for p in publishers]


def _js(names, frame, stamp_ns, arrays):
    msg = JointState(name=list(names))
    msg.header.frame_id = frame
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(int(stamp_ns), 1_000_000_000)
    msg.position, msg.velocity, msg.effort = (np.asarray(a, dtype=float).tolist()
                                              for a in arrays)
    return msg


def _rosbags_bytes(out):
    """Serialise an output with rosbags (a CDR writer that is not the one under test)."""
    if isinstance(out, bytes):
        return out
    kind = type(out).__name__
    T = STORE.types
    if kind == 'JointState':
        msg = build(STORE, out.name, out.header.frame_id, out.header.stamp.sec,
                    out.header.stamp.nanosec, (out.position, out.velocity, out.effort))
        name = 'sensor_msgs/msg/JointState'
    elif kind == 'Float64':
        msg, name = T['std_msgs/msg/Float64'](data=out.data), 'std_msgs/msg/Float64'
    else:
        def header(h):
            return T['std_msgs/msg/Header'](stamp=T['builtin_interfaces/msg/Time'](
                sec=h.stamp.sec, nanosec=h.stamp.nanosec), frame_id=h.frame_id)

        def pose(p):
            return T['geometry_msgs/msg/Pose'](
                position=T['geometry_msgs/msg/Point'](x=p.position.x, y=p.position.y,
                                                      z=p.position.z),
                orientation=T['geometry_msgs/msg/Quaternion'](
                    x=p.orientation.x, y=p.orientation.y, z=p.orientation.z,
                    w=p.orientation.w))
        if kind == 'TFMessage':
            def transform(t):
                tr, rot = t.transform.translation, t.transform.rotation
                return T['geometry_msgs/msg/TransformStamped'](
                    header=header(t.header), child_frame_id=t.child_frame_id,
                    transform=T['geometry_msgs/msg/Transform'](
                        translation=T['geometry_msgs/msg/Vector3'](x=tr.x, y=tr.y, z=tr.z),
                        rotation=T['geometry_msgs/msg/Quaternion'](x=rot.x, y=rot.y, z=rot.z,
                                                                   w=rot.w)))
            msg = T['tf2_msgs/msg/TFMessage'](transforms=[transform(t) for t in out.transforms])
            name = 'tf2_msgs/msg/TFMessage'
        elif kind == 'PoseArray':
            msg = T['geometry_msgs/msg/PoseArray'](header=header(out.header),
                                                   poses=[pose(p) for p in out.poses])
            name = 'geometry_msgs/msg/PoseArray'
        else:
            msg = T['geometry_msgs/msg/PoseStamped'](header=header(out.header),
                                                     pose=pose(out.pose))
            name = 'geometry_msgs/msg/PoseStamped'
    return bytes(STORE.serialize_cdr(msg, name))


def _stream(rng, names_by_topic, irregular=True):
    """Yield ``(topic, bytes)`` or ``('param', None)``: mostly regular, some of everything."""
    stamps = {t: 10**9 for t in names_by_topic}
    frames = {t: 'motors' for t in names_by_topic}
    for _ in range(MESSAGES):
        topic = list(names_by_topic)[rng.integers(len(names_by_topic))]
        names = list(names_by_topic[topic])
        n = len(names)
        arrays = [rng.normal(0, 2, n) for _ in range(3)]
        event = rng.random() if irregular else 1.0
        stamps[topic] += int(rng.integers(1, 2_000_000))
        stamp = stamps[topic]
        if event < 0.04:
            arrays[rng.integers(3)][rng.integers(n)] = np.nan
        elif event < 0.06:
            arrays[rng.integers(3)][rng.integers(n)] = rng.choice([np.inf, -np.inf])
        elif event < 0.08:
            stamp -= int(rng.integers(1, 5_000_000))            # a looping bag
            stamps[topic] = stamp
        elif event < 0.11:
            keep = np.sort(rng.choice(n, rng.integers(1, n + 1), replace=False))
            names = [names[k] for k in keep]
            arrays = [a[keep] for a in arrays]
        elif event < 0.13:
            order = rng.permutation(n)
            names = [names[k] for k in order]
        elif event < 0.15:
            names = names + ['stranger']
            arrays = [np.r_[a, 1.0] for a in arrays]
        elif event < 0.16:
            arrays[rng.integers(3)] = arrays[0][:-1]             # length mismatch
        elif event < 0.17 and n > 1:
            names[1] = names[0]                                   # duplicate names
        elif event < 0.19:
            frames[topic] = rng.choice(['motors', 'base', ''])
        elif event < 0.21:
            arrays[rng.integers(3)] = []
        elif event < 0.22:
            yield 'param', None
            continue
        yield topic, serialize_message(_js(names, frames[topic], stamp, arrays))


def _compare(outputs_fast, outputs_typed, tally):
    if not isinstance(outputs_typed, (list, tuple)):     # the bridge: one output or None
        outputs_fast, outputs_typed = (
            [] if out is None else [(None, out)] for out in (outputs_fast, outputs_typed))
    assert ([p and p.topic_name.split('/', 2)[-1] for p, _ in outputs_fast]
            == [p and p.topic_name.split('/', 2)[-1] for p, _ in outputs_typed])
    for (_, fast), (_, typed) in zip(outputs_fast, outputs_typed):
        assert not isinstance(typed, bytes)
        tally[isinstance(fast, bytes)] += 1
        assert _rosbags_bytes(fast) == _rosbags_bytes(typed)


def _run(nodes, stream, handle, change, tally):
    """Feed ``stream`` to both nodes (``handle(node, topic, data)``), compare every output."""
    for topic, data in stream:
        if topic == 'param':
            params = [change()]
            for node in nodes:
                assert node.set_parameters(params)[0].successful
            continue
        _compare(*(handle(node, topic, data) for node in nodes), tally)
    assert tally[True] >= FAST_SHARE * (tally[True] + tally[False]), tally


@pytest.mark.parametrize('split', ['two_topics', 'one_topic', 'overlapping', 'units_one',
                                   'units_two'])
def test_bridge_actuator_states_fast_equals_typed(context, split):
    # One topic naming every actuator goes through the node's bytes-to-bytes relay; two
    # topics, each naming some, through relays that write their actuators in place.
    # Overlapping: one topic names every actuator and another the wrist's, which the first
    # must not take over on the fast path (shared actuators are counted and warned of).
    # units_*: the same arm on drives reporting their own units (both routes take them in).
    rng = np.random.default_rng({'two_topics': 1201, 'one_topic': 1204, 'overlapping': 1205,
                                 'units_one': 1206, 'units_two': 1207}[split])
    config = ('cia402_arm_transmissions.yaml' if split.startswith('units')
              else 'example_robot_transmissions.yaml')
    split = {'units_one': 'one_topic', 'units_two': 'two_topics'}.get(split, split)
    topics = list(TOPICS[:1] if split == 'one_topic' else TOPICS)
    fast, typed = _pair(TransmissionBridge, context, {
        'transmissions_file': str(CONFIG / config), 'actuator_state_topics': topics})
    names = list(TS.actuator_names)
    wrist = [n for n in names if n.startswith('wrist')]
    by_topic = {'two_topics': {TOPICS[0]: [n for n in names if n not in wrist],
                               TOPICS[1]: wrist},
                'one_topic': {TOPICS[0]: names},
                'overlapping': {TOPICS[0]: names, TOPICS[1]: wrist}}[split]
    tally = {True: 0, False: 0}
    joints = TS.joint_names
    _run((fast, typed), _stream(rng, by_topic),
         _actuator_state,
         lambda: Parameter(f'joints.{joints[rng.integers(len(joints))]}.offset',
                           value=float(rng.normal())), tally)
    assert fast._states.counters.as_dict() == typed._states.counters.as_dict()
    np.testing.assert_array_equal(fast._states.actuator_positions(),
                                  typed._states.actuator_positions())
    assert (fast._states.counters.rejected_non_finite > 0
            and fast._states.counters.stamp_backwards > 0)
    if split == 'overlapping':
        assert fast._states.counters.shared_actuators > 0


def _actuator_state(node, topic, data):
    """Return what the bridge's subscription callback of ``topic`` publishes for ``data``."""
    return node.actuator_states(topic, data)


def test_a_frame_id_that_changes_every_message_keeps_to_the_fast_route(context):
    # A driver that counts its messages in frame_id (or tags each with its source) must not
    # push every message to the typed route: a frame_id is not part of a layout. Both
    # nodes copy the input's header into joint_states; the kinematics node ignores it.
    rng = np.random.default_rng(1209)
    names = list(TS.actuator_names)
    bridges = _pair(TransmissionBridge, context, {
        'transmissions_file': str(CONFIG / 'example_robot_transmissions.yaml')})
    kinematics = _pair(KinematicsNode, context, {
        'model_file': str(CONFIG / 'example_arm_model.yaml')})
    joints = list(kinematics[0]._core.model.joint_names)
    tally = {True: 0, False: 0}
    for k in range(200):
        stamp = 10**9 + k
        frame = f'seq{k:05d}' if k % 50 else 'driver_a'     # and now and then a source tag
        arrays = [rng.normal(size=len(names)) for _ in range(3)]
        data = serialize_message(_js(names, frame, stamp, arrays))
        outputs = [node.actuator_states('actuator_states', data) for node in bridges]
        _compare(*outputs, tally)
        out = outputs[0]
        out = deserialize_message(out, JointState) if isinstance(out, bytes) else out
        assert out.header.frame_id == frame
        data = serialize_message(_js(joints, frame, stamp, [a[:len(joints)] for a in arrays]))
        _compare(*(list(node.joint_states(data)) for node in kinematics), tally)
    assert bridges[0]._routes.typed_count['actuator_states'] <= 10
    assert kinematics[0]._typed_count <= 10


@pytest.mark.parametrize('config', ['example_robot_transmissions.yaml',
                                    'cia402_arm_transmissions.yaml'])
def test_bridge_joint_commands_fast_equals_typed(context, config):
    rng = np.random.default_rng(1202)
    fast, typed = _pair(TransmissionBridge, context, {
        'transmissions_file': str(CONFIG / config)})
    by_topic = {'joint_commands': list(TS.joint_names)}
    tally = {True: 0, False: 0}
    alone = serialize_message(_js(['wrist_pitch'], '', 1, [[0.1], [], []]))  # roll never sent
    _compare(fast.joint_commands(alone), typed.joint_commands(alone), tally)
    _run((fast, typed), _stream(rng, by_topic),
         lambda node, topic, data: node.joint_commands(data),
         lambda: Parameter(f'actuators.{TS.actuator_names[0]}.mechanical_reduction',
                           value=float(rng.uniform(5, 50))), tally)
    assert fast._commands.counters.as_dict() == typed._commands.counters.as_dict()
    assert fast._commands.counters.rejected_incomplete > 0


# A steady stream's layouts: which of position, velocity and effort a message carries.
LAYOUTS = {'position+effort': (True, False, True), 'effort': (False, False, True),
           'all three': (True, True, True), 'position': (True, False, False),
           'velocity+effort': (False, True, True)}
STREAMED_SHARE = 0.8        # of a steady stream's commands, at least, by the layout's own map


@pytest.mark.parametrize('config', ['example_robot_transmissions.yaml',
                                    'cia402_arm_transmissions.yaml'])
@pytest.mark.parametrize('layout', list(LAYOUTS))
def test_a_steady_command_stream_takes_its_layouts_map_and_the_same_bytes(
        context, monkeypatch, config, layout):
    # What a controller streams (the kinematics node's gravity torques carry positions and
    # efforts): one layout, inside the limits, the motors moving (the damping and the gear
    # losses take the measured motion), names in another order than the set's, parameters
    # changed mid-stream, and now and then a command beyond a limit (the reference's). The
    # layout's own map (StreamedCommand) must give the typed route's bytes, and take most.
    from transmission_bridge.mapping import prepared
    taken = {'bytes': 0, 'none': 0}
    command = prepared.StreamedCommand.command

    def counted(self, *args):
        out = command(self, *args)
        taken['none' if out is None else 'bytes'] += 1
        return out
    monkeypatch.setattr(prepared.StreamedCommand, 'command', counted)
    tset = load_transmissions(CONFIG / config)
    fast, typed = _pair(TransmissionBridge, context, {
        'transmissions_file': str(CONFIG / config)})
    rng = np.random.default_rng(1210 + list(LAYOUTS).index(layout))
    names = list(reversed(tset.joint_names))
    order = [tset.joint_index[n] for n in names]
    tally = {True: 0, False: 0}
    stamp, sent = 10**9, 0
    for k in range(400):
        stamp += 1_000_000
        q = tset.default_positions + rng.normal(0, 0.01, tset.num_joints)
        qd = rng.normal(0, 0.2, tset.num_joints)
        theta, thetad = tset.motion_to_actuator(q, qd)
        state = serialize_message(_js(tset.actuator_names, 'motors', stamp,
                                      [theta, thetad, np.zeros(len(theta))]))
        _compare(*(node.actuator_states('actuator_states', state) for node in (fast, typed)),
                 tally)
        if k % 97 == 50:
            change = [Parameter(f'joints.{names[k % len(names)]}.damping',
                                value=float(rng.uniform(0.0, 0.5)))]
            for node in (fast, typed):
                assert node.set_parameters(change)[0].successful
        tau = rng.normal(0, 0.02, tset.num_joints) * (100.0 if k % 41 == 7 else 1.0)
        arrays = [values[order] if there else []
                  for values, there in zip((q, 0.5 * qd, tau), LAYOUTS[layout])]
        data = serialize_message(_js(names, 'base_link', stamp, arrays))
        _compare(fast.joint_commands(data), typed.joint_commands(data), tally)
        sent += 1
    assert fast._commands.counters.as_dict() == typed._commands.counters.as_dict()
    assert fast._commands.counters.published >= STREAMED_SHARE * sent
    assert taken['bytes'] >= STREAMED_SHARE * sent, taken


def test_bridge_counts_every_command_whoever_takes_it(context):
    # Springs on every joint take whole joint_commands messages; the diagnostics' received
    # and fast/typed counts must still add up, on both paths (springs streaming read
    # commands_received 0 and commands_fast -1).
    from transmission_bridge.bridge import status
    gains = {f'gains.{j}.{k}': v for j in TS.joint_names for k, v in (('p', 20.0), ('d', 0.5))}
    nodes = _pair(TransmissionBridge, context, {
        'transmissions_file': str(CONFIG / 'example_robot_transmissions.yaml'), **gains})
    rng = np.random.default_rng(1208)
    names = list(TS.joint_names)
    sent = 40
    for k in range(sent):
        target = rng.uniform(-0.3, 0.3, len(names))
        data = serialize_message(_js(names, '', 10**9 + k, [target, [], []]))
        for node in nodes:
            assert node.joint_commands(data) is None        # the springs' targets
    plain = serialize_message(_js(['no_such_joint'], '', 2 * 10**9, [[0.1], [], []]))
    for node in nodes:
        node.joint_commands(plain)                          # the plain mapping's (unknown)
    for node, fast in zip(nodes, (True, False)):
        report = status.status(node._routes, node._execution.deadline, True, 0, '', 0, 10**9)
        routes = report.extra
        assert report.counters['commands_received'] == sent + 1, report.counters
        assert routes['commands_fast'] + routes['commands_typed'] == sent + 1, routes
        assert min(routes['commands_fast'], routes['commands_typed']) >= 0, routes
        if fast:
            assert routes['commands_fast'] >= sent - 2, routes
        else:
            assert routes['commands_typed'] == sent + 1, routes


@pytest.mark.parametrize('base', ['world', 'forearm'])
def test_kinematics_outputs_fast_equal_typed(context, base):
    # In a body's frame, and with a name the model does not have in every message (a
    # gripper driven elsewhere); the clock jumps back now and then (the nodes reset).
    rng = np.random.default_rng({'world': 1203, 'forearm': 1207}[base])
    fast, typed = _pair(KinematicsNode, context, {
        'model_file': str(CONFIG / 'example_arm_model.yaml'),
        'tip_links': ['tool', 'hand'], 'base_frame': base})
    joints = list(fast._core.model.joint_names)
    names = joints + ['gripper'] if base != 'world' else joints
    tally = {True: 0, False: 0}

    def with_resets(stream):
        for k, item in enumerate(stream):
            if k % 300 == 299:
                fast._forget_inputs()
                typed._forget_inputs()
            yield item

    def change():
        if rng.random() < 0.5:
            return Parameter(f'publish_every.{OUTPUTS[rng.integers(len(OUTPUTS))]}',
                             value=int(rng.integers(0, 4)))
        return Parameter(f'joints.{joints[rng.integers(len(joints))]}.damping',
                         value=float(rng.uniform(0, 2)))
    _run((fast, typed), with_resets(_stream(rng, {'joint_states': names})),
         lambda node, topic, data: list(node.joint_states(data)), change, tally)
    assert fast._core.counters.as_dict() == typed._core.counters.as_dict()
    if base != 'world':
        assert fast._core.counters.unknown_names > MESSAGES / 2


def test_publish_every_decimates_and_switches_off_outputs(context):
    fast, typed = _pair(KinematicsNode, context, {
        'model_file': str(CONFIG / 'example_arm_model.yaml'), 'tip_links': ['tool'],
        'publish_every.gravity_torques': 3, 'publish_every.potential_energy': 0})
    joints = list(fast._core.model.joint_names)
    stream = [serialize_message(_js(joints, '', 10**9 + k, [np.full(len(joints), 0.1 * k),
                                                            [], []])) for k in range(9)]
    for node in (fast, typed):
        sent = [p.topic_name.split('/')[-1] for data in stream
                for p, _ in node.joint_states(data)]
        assert sent.count('gravity_torques') == 3           # messages 0, 3, 6
        assert sent.count('potential_energy') == 0
        assert sent.count('passive_torques') == sent.count('body_poses') == 9
        assert sent.count('pose') == 9                      # ~/tool/pose
        # Refused with a reason, nothing changed; a valid change takes effect at once.
        result = node.set_parameters([Parameter('publish_every.body_poses', value=-1)])[0]
        assert not result.successful and 'publish_every.body_poses' in result.reason
        for bad in (1.5, 'two'):        # rclpy refuses another type with its own reason
            result = node.set_parameters([Parameter('publish_every.body_poses', value=bad)])[0]
            assert not result.successful and 'INTEGER' in result.reason
        assert node.get_parameter('publish_every.body_poses').value == 1
        assert node.set_parameters([Parameter('publish_every.body_poses', value=0)])[0].successful
        assert 'body_poses' not in [p.topic_name.split('/')[-1]
                                    for p, _ in node.joint_states(stream[0])]


def test_an_output_no_one_reads_is_not_computed_and_a_new_reader_gets_the_next(context):
    # DDS drops a message no reader matched; the node does not compute it in the first place.
    pair = _pair(KinematicsNode, context, {'model_file': str(CONFIG / 'example_arm_model.yaml'),
                                           'tip_links': ['tool'], 'publish_frequency': 0.0},
                 listen=False)
    joints = list(pair[0]._core.model.joint_names)
    stream = [serialize_message(_js(joints, '', 10**9 + k, [np.full(len(joints), 0.1 * k),
                                                            [], []])) for k in range(4)]
    for node in pair:                   # (/tf is one topic: read before either listens)
        assert [list(node.joint_states(data)) for data in stream[:2]] == [[], []]
    for node in pair:
        _listen(node, context, ['body_poses', 'tf'])
        sent = [p.topic_name.split('/')[-1] for p, _ in node.joint_states(stream[2])]
        assert sent == ['body_poses', 'tf'], sent
        _listen(node, context, ['gravity_torques', 'pose'])
        sent = [p.topic_name.split('/')[-1] for p, _ in node.joint_states(stream[3])]
        assert sent == ['gravity_torques', 'body_poses', 'pose', 'tf'], sent
    assert pair[0]._core.counters.as_dict() == pair[1]._core.counters.as_dict()


@pytest.mark.parametrize('override, words', [
    ({'publish_every.gravity_torque': 2}, "no parameter 'publish_every.gravity_torque'"),
    ({'publish_every.body_poses': -2}, 'publish_every.body_poses must be an integer >= 0, got -2'),
])
def test_a_bad_publish_every_stops_start_up_with_the_key(context, override, words):
    with pytest.raises(StartupError, match=words):
        KinematicsNode(context=context, parameter_overrides=[
            Parameter('model_file', value=str(CONFIG / 'example_arm_model.yaml')),
            *(Parameter(k, value=v) for k, v in override.items())])


def test_the_receive_clock_follows_use_sim_time(context):
    # The nodes' per-message clock reads the system clock while ROS time is off, and the
    # ROS clock once use_sim_time turns it on (0 until a /clock message arrives).
    node = rclpy.create_node('clock_probe', context=context)
    _NODES.append(node)
    now = now_ns_function(node.get_clock())
    for sim in (False, True, False):
        assert node.set_parameters([Parameter('use_sim_time', value=sim)])[0].successful
        before = time.time_ns()
        got = now()
        if sim:
            assert got == node.get_clock().now().nanoseconds == 0
        else:
            assert before <= got <= time.time_ns()


# --- degraded states stay on the fast path ------------------------------------------------
# While some joints are withheld (an encoder waiting for its turns, an actuator of another
# topic stale, a linkage refusing the state), the other joints' messages keep to the fast
# route, byte for byte what the typed route publishes; what changes the withheld set (the
# turns given, the actuator heard again, the linkage solvable again) goes typed once.
DEGRADED_MESSAGES = 300     # per phase
DEGRADED_TYPED_MAX = 6      # typed messages a phase change may take (learn, then relearn)


def _feed(bridges, topic, names, rows, stamp0, tally, frame='motors'):
    """Send ``rows`` to both bridges, compare; return the next stamp and the last output."""
    for k, row in enumerate(rows):
        data = serialize_message(_js(names, frame, stamp0 + k * 1_000_000, row))
        outputs = [node.actuator_states(topic, data) for node in bridges]
        _compare(*outputs, tally)
    last = outputs[1]
    return stamp0 + len(rows) * 1_000_000, last


def _typed(bridge):
    return bridge._routes.typed_count['actuator_states']


def test_an_encoder_waiting_for_its_turns_keeps_the_other_joints_fast(context):
    rng = np.random.default_rng(1211)
    bridges = _pair(TransmissionBridge, context, {
        'transmissions_file': str(CONFIG / 'single_turn_encoder_transmissions.yaml')})
    names = ['knee_motor', 'hip_motor']
    # knee: 6:1 behind a one-turn encoder, so readings near 1 rad fit two turns; hip: 1:1.
    rows = [[np.array([1.0, 0.0]) + rng.uniform(-0.2, 0.2, 2), rng.normal(size=2),
             rng.normal(size=2)] for _ in range(DEGRADED_MESSAGES)]
    tally = {True: 0, False: 0}
    stamp, out = _feed(bridges, 'actuator_states', names, rows, 10**9, tally)
    assert bridges[0]._states.encoders.ambiguous      # still waiting: the knee is withheld
    assert list(out.name) == ['hip']
    assert _typed(bridges[0]) <= DEGRADED_TYPED_MAX, _typed(bridges[0])
    for node in bridges:                                # the operator gives the turns
        assert node.set_parameters([Parameter('actuators.knee_motor.encoder_turns',
                                              value=0)])[0].successful
    before = _typed(bridges[0])
    _, out = _feed(bridges, 'actuator_states', names, rows, stamp + 10**6, tally)
    assert _typed(bridges[0]) - before <= DEGRADED_TYPED_MAX
    assert list(out.name) == ['knee', 'hip']
    assert bridges[0]._states.counters.as_dict() == bridges[1]._states.counters.as_dict()


def test_a_stale_actuator_of_another_topic_keeps_the_other_joints_fast(context):
    rng = np.random.default_rng(1212)
    stale_s = 0.3
    bridges = _pair(TransmissionBridge, context, {
        'transmissions_file': str(CONFIG / 'example_robot_transmissions.yaml'),
        'actuator_state_topics': list(TOPICS), 'stale_timeout': stale_s})
    names = list(TS.actuator_names)
    wrist = [n for n in names if n.startswith('wrist')]
    arm = [n for n in names if n not in wrist]

    def rows(n):
        return [[rng.normal(size=n) for _ in range(3)] for _ in range(DEGRADED_MESSAGES)]
    tally = {True: 0, False: 0}
    stamp, _ = _feed(bridges, TOPICS[1], wrist, rows(len(wrist))[:2], 10**9, tally)
    stamp, out = _feed(bridges, TOPICS[0], arm, rows(len(arm)), stamp, tally)
    assert 'wrist_roll' in out.name
    time.sleep(2 * stale_s)                             # the wrist's driver stops
    typed_before = _typed(bridges[0])
    stamp, out = _feed(bridges, TOPICS[0], arm, rows(len(arm)), stamp, tally)
    assert _typed(bridges[0]) - typed_before <= DEGRADED_TYPED_MAX
    assert bridges[0]._states.stale_joints == ('wrist_pitch', 'wrist_roll')
    assert 'wrist_roll' not in out.name and 'elbow' in out.name
    for timeout in (3600.0, stale_s):   # ros2 param set: not stale, then stale again
        for node in bridges:
            assert node.set_parameters([Parameter('stale_timeout', value=timeout)])[0].successful
        stamp, out = _feed(bridges, TOPICS[0], arm, rows(len(arm))[:20], stamp, tally)
        assert ('wrist_roll' in out.name) == (timeout > stale_s), timeout
    typed_before = _typed(bridges[0])                   # it comes back
    stamp, _ = _feed(bridges, TOPICS[1], wrist, rows(len(wrist))[:2], stamp, tally)
    _, out = _feed(bridges, TOPICS[0], arm, rows(len(arm)), stamp, tally)
    assert _typed(bridges[0]) - typed_before <= DEGRADED_TYPED_MAX
    assert 'wrist_roll' in out.name
    assert bridges[0]._states.counters.as_dict() == bridges[1]._states.counters.as_dict()


def test_a_refusing_linkage_keeps_the_other_joints_fast(context):
    rng = np.random.default_rng(1213)
    legged = load_transmissions(CONFIG / 'legged_robot.urdf')
    bridges = _pair(TransmissionBridge, context, {
        'transmissions_file': str(CONFIG / 'legged_robot.urdf')})
    names = list(legged.actuator_names)
    ankle = names.index('right_ankle_lower_motor')

    def rows(ankle_at):
        out = []
        for _ in range(DEGRADED_MESSAGES):
            position = rng.uniform(-0.02, 0.02, len(names))
            position[ankle] += ankle_at
            out.append([position, rng.normal(size=len(names)), rng.normal(size=len(names))])
        return out
    tally = {True: 0, False: 0}
    phases = [(0.0, ()), (3.0, ('right_ankle_pitch', 'right_ankle_roll')), (0.0, ())]
    stamp = 10**9
    for ankle_at, withheld in phases:
        typed_before = _typed(bridges[0])
        stamp, out = _feed(bridges, 'actuator_states', names, rows(ankle_at), stamp, tally)
        assert _typed(bridges[0]) - typed_before <= DEGRADED_TYPED_MAX, ankle_at
        assert set(out.name) == set(legged.joint_names) - set(withheld)
        assert tuple(j for joints in bridges[0]._states.refused for j in joints) == withheld
    counters = bridges[0]._states.counters
    assert counters.refused_linkage_states >= DEGRADED_MESSAGES - DEGRADED_TYPED_MAX
    assert counters.as_dict() == bridges[1]._states.counters.as_dict()
