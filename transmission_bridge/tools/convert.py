"""
transmission_bridge_convert: apply transmissions (and a model) to a recorded bag, offline.

Reads every actuator-state message (sensor_msgs/JointState with actuator names) of
IN_BAG and writes OUT_BAG with every other topic unchanged, the joint_states the
live bridge would publish (same stamps) and, with --model, the kinematics node's
gravity torques and each motor's holding torque on /actuator_commands (what the
bridge publishes when robot.launch.py feeds it the gravity torques; --keep-input
also keeps the actuator states). No ROS graph is
needed. The output appears only when complete.
"""

import argparse
import sys

from . import cli

PROG = 'transmission_bridge_convert'


def parser():
    """Return the argument parser."""
    p = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('in_bag', help='input rosbag2 bag (folder with metadata.yaml)')
    p.add_argument('out_bag', help='output bag folder (must not exist)')
    p.add_argument('--transmissions', required=True, help='transmissions YAML')
    p.add_argument('--model', help='robot model YAML: also write gravity torques')
    p.add_argument('--topic', default='/actuator_states', help='actuator-state topic')
    p.add_argument('--joint-states-topic', default='/joint_states')
    p.add_argument('--gravity-topic', default='/kinematics/gravity_torques')
    p.add_argument('--commands-topic', default='/actuator_commands',
                   help='with --model: motor holding torques (actuator names)')
    p.add_argument('--storage', choices=('mcap', 'sqlite3'), default='mcap')
    p.add_argument('--keep-input', action='store_true',
                   help='also copy the actuator-state topic (default: replaced by joint_states)')
    p.add_argument('--plot', metavar='OUT.png', help='also draw actuator and joint signals')
    p.add_argument('--quiet', action='store_true', help='no summary line')
    return p


def main(argv=None):
    """Run the tool; return the exit code (0 ok, 1 error, 130 interrupted)."""
    args = parser().parse_args(argv)
    missing = cli.missing_dependency(cli.ROSBAGS, *([cli.MATPLOTLIB] if args.plot else []))
    if missing:
        return cli.fail(PROG, missing)
    from ..bag.convert import convert_bag
    from ..bag.errors import BagError
    from ..kinematics import load_model, ModelError
    from ..transmissions import ConfigError, load_transmissions
    progress = cli.Progress()
    try:
        tset = load_transmissions(args.transmissions)
        model = load_model(args.model) if args.model else None
        result = convert_bag(args.in_bag, args.out_bag, tset, model, args.topic,
                             args.joint_states_topic, args.gravity_topic, args.storage,
                             progress, args.keep_input, args.commands_topic)
        progress.done()
        if args.plot:
            from .plot import plot_conversion
            plot_conversion(result, args.plot)
    except (BagError, ConfigError, ModelError, OSError) as exc:
        progress.done()
        return cli.fail(PROG, exc)
    except KeyboardInterrupt:
        progress.done()
        return cli.fail(PROG, 'interrupted; no output written', 130)
    if not args.quiet:
        print(f'{result.messages_in} messages read, {result.actuator_messages} actuator '
              f'states -> {result.joint_states} joint_states'
              + (f', {result.gravity_torques} gravity_torques, {result.actuator_commands} '
                 'actuator_commands' if model else '')
              + f' ({"vectorised" if result.vectorised else "message by message"}); '
              f'wrote {args.out_bag}' + (f' and {args.plot}' if args.plot else ''))
    return 0


def console():
    """Console-script entry point: exit with :func:`main`'s code."""
    sys.exit(main())


if __name__ == '__main__':
    sys.exit(main())
