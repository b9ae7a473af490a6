"""
What gear losses cost the bridge per message: every motor lossy against every motor ideal.

    python bench/bench_losses.py [--number 3000]

Real bridges built in this process (real rclpy, not spun), fast path on, timed as
bench_nodes.py times them: the subscriptions' callbacks called with the serialised messages.
Side by side, in alternating rounds on the same messages, the same robot twice: ``ideal``
(every motor's friction set to 0: the gear stages pass torque unchanged, the maps as before)
and ``lossy`` (every motor: efficiency 0.85 driving, 0.75 driven, viscous 1e-4 and Coulomb
0.01 friction), both through ``--ros-args -p`` parameters. The paths:

* ``actuator_states`` of the example arm (7 motors), of the 24-actuator bench robot and of
  the legged robot (knee and ankle linkages): each state's efforts through the stages;
* ``joint_commands`` efforts of the example arm, stamped with the state they come from (as
  the kinematics node stamps its holding torques), one before each state: each command at
  that state's motor velocities (the bridge's history by stamp);
* joint springs on every joint: ``effort`` on the example arm and ``motor_gains`` on the
  legged robot, one command per state.

The motors move (random velocities in both directions and at rest, random torques), so
every branch of the stages is taken. ``lossy/ideal`` is the median of the rounds' ratios;
``typed`` the messages either bridge took on the typed route while timed (0: the fast path
kept).
"""

import pathlib
import statistics
import sys

from bench_nodes import _callback, _node
from common import alternating, in_process_bridges, report, stamped_states

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CONFIG = ROOT / 'config'
ROUNDS = 10
LOSSY = {'efficiency.driving': 0.85, 'efficiency.driven': 0.75, 'friction.viscous': 1e-4,
         'friction.coulomb': 0.01}
IDEAL = {'friction.viscous': 0.0, 'friction.coulomb': 0.0}


def _states(tset, count, rng):
    """Return ``count`` actuator_states bytes near the default pose, moving, 1 ms apart."""
    n = tset.num_actuators
    pose = tset.joint_to_actuator('position', tset.default_positions).tolist()
    return stamped_states(count, lambda k: {
        'name': list(tset.actuator_names), 'position': pose,
        'velocity': (rng.uniform(0.0, 3.0, n) * rng.choice([-1.0, 0.0, 1.0], n)).tolist(),
        'effort': rng.normal(size=n).tolist()})


def _efforts(tset, count, rng):
    """Return ``count`` joint_commands bytes of efforts, stamped as the states are."""
    return stamped_states(count, lambda k: {
        'name': list(tset.joint_names), 'effort': rng.normal(size=tset.num_joints).tolist()})


def _targets(tset):
    """Return one joint_commands message: every joint's target near its default position."""
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState
    q = tset.default_positions + 0.01
    return serialize_message(JointState(name=list(tset.joint_names), position=q.tolist()))


def _stages(tset, values):
    return {f'actuators.{m}.{k}': v for m in tset.actuator_names for k, v in values.items()}


def main(argv=None):
    """Run the benchmark and print the table."""
    args, context = in_process_bridges(__doc__, 3000, 'losses', 229, argv)
    import tempfile
    import numpy as np
    import rclpy
    from robots import transmissions_24, write_transmissions
    from transmission_bridge.bridge.node import TransmissionBridge
    from transmission_bridge.transmissions import load_transmissions
    work = pathlib.Path(tempfile.mkdtemp(prefix='bench_losses_'))
    bench24 = write_transmissions(transmissions_24(), work / 'bench24.yaml')
    arm, legged = CONFIG / 'example_robot_transmissions.yaml', CONFIG / 'legged_robot.urdf'
    cases = [('example arm', arm, 'actuator_states', None),
             ('24 actuators', bench24, 'actuator_states', None),
             ('legged robot', legged, 'actuator_states', None),
             ('example arm', arm, 'joint_commands efforts', None),
             ('example arm', arm, 'springs', 'effort'),
             ('legged robot', legged, 'springs', 'motor_gains')]
    rows = []
    rng = np.random.default_rng(57)
    for k, (robot, path, what, output) in enumerate(cases):
        tset = load_transmissions(path)
        base = {'transmissions_file': str(path), 'command_timeout': 0.0}
        if output is not None:
            base.update({'impedance_output': output,
                         **{f'gains.{j}.p': 20.0 for j in tset.joint_names},
                         **{f'gains.{j}.d': 0.5 for j in tset.joint_names}})
        states = _states(tset, 100 + args.number, rng)
        commands = _efforts(tset, 100 + args.number, rng) if what.startswith('joint') else None
        nodes = {name: _node(TransmissionBridge, context, f'loss_{name}_{k}',
                             {**base, **_stages(tset, values)}, True)
                 for name, values in (('ideal', IDEAL), ('lossy', LOSSY))}
        assert nodes['ideal']._routes.states.transmissions.losses.lossless
        assert nodes['lossy']._routes.states.transmissions.losses.lossy.all()
        on_state = {w: _callback(n, 'actuator_states') for w, n in nodes.items()}
        on_command = {w: _callback(n, 'joint_commands') for w, n in nodes.items()}
        for name in nodes:                  # warm up: layouts learnt, kernels compiled
            if output is not None:
                on_command[name](_targets(tset))
            for i, data in enumerate(states[:100]):
                if commands is not None and i:
                    on_command[name](commands[i - 1])
                on_state[name](data)
        typed = {w: dict(n._routes.typed_count) for w, n in nodes.items()}
        per_round = args.number // ROUNDS

        def run(name, r):
            at = 100 + r * per_round
            state, command = on_state[name], on_command[name]
            if commands is None:
                for data in states[at:at + per_round]:
                    state(data)
            else:
                for i in range(at, at + per_round):
                    command(commands[i - 1])
                    state(states[i])
            return per_round
        times = alternating(nodes, ROUNDS, run)
        slow = sum(n._routes.typed_count[key] - typed[w][key] for w, n in nodes.items()
                   for key in typed[w])
        rows.append({'robot': robot, 'path': what if output is None else f'{what} ({output})',
                     'ideal_us': statistics.median(times['ideal']) * 1e6,
                     'lossy_us': statistics.median(times['lossy']) * 1e6,
                     'lossy/ideal': statistics.median(
                         [b / a for a, b in zip(times['ideal'], times['lossy'])]),
                     'typed': slow})
        for node in nodes.values():
            node.destroy_node()
    report(args.results, rows, ['robot', 'path', 'ideal_us', 'lossy_us', 'lossy/ideal',
                                'typed'])
    rclpy.shutdown(context=context)


if __name__ == '__main__':
    main()
