"""
transmission_bridge_identify excite: a trajectory that excites every parameter, as a goal.

    transmission_bridge_identify excite --model URDF [--transmissions FILE] --duration S
        --output GOAL.yaml [--start Q1,Q2,...] [--period S] [--harmonics L]
        [--max-acceleration A] [--seed N] [--send ACTION --record BAG]

Writes a control_msgs/action/FollowJointTrajectory goal (YAML, as ``ros2 action send_goal``
takes it): a lead-in to the start pose, then whole periods of a Fourier-series excitation
(doc/identify_dynamics.md) that starts and ends at rest at that pose, within every joint's
position, velocity (and --max-acceleration) limits and every motor's position, velocity and
effort limits through the transmissions (the efforts from the model's inverse dynamics,
gear losses included). The start pose: --start, else the robot's measured one with --send,
else the default positions; a joint of these on (or within 5 % of its range of) a limit is
moved inside, and said. With --send the goal goes to the bridge's action server and the
motors' states are recorded to BAG while it runs: the bag identify --dynamic reads.
"""

import argparse
import math
import pathlib
import sys

import numpy as np

from . import cli
from ..transmissions import effort_law

PROG = 'transmission_bridge_identify excite'
ARGUMENT_LIMIT = 128 * 1024     # bytes: Linux's longest single command-line argument
INSIDE = 0.05                   # of a joint's range: how far inside its limits a start sits


def parser():
    """Return the argument parser."""
    p = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--model', required=True, help='robot model: URDF or model YAML')
    p.add_argument('--transmissions', help='transmissions YAML or URDF (motor limits, losses)')
    p.add_argument('--duration', type=float, required=True,
                   help='seconds of excitation (rounded up to whole periods)')
    p.add_argument('--output', required=True, help='the goal YAML to write')
    p.add_argument('--start', help='start pose: one position per joint, comma separated')
    p.add_argument('--joints', nargs='+', metavar='JOINT',
                   help='excite only these joints (the others hold the start pose; '
                        'default: every joint of the transmissions, else of the model)')
    p.add_argument('--period', type=float, default=10.0, help='period, s (default 10)')
    p.add_argument('--harmonics', type=int, default=5, help='harmonics (default 5)')
    p.add_argument('--max-acceleration', type=float,
                   help='every joint slower to accelerate than this, rad/s² or m/s²')
    p.add_argument('--lead-in', type=float, default=3.0,
                   help='seconds to reach the start pose first (default 3)')
    p.add_argument('--point-step', type=float, default=0.1,
                   help="seconds between the goal's points (default 0.1)")
    p.add_argument('--candidates', type=int, default=24,
                   help='random directions tried, then as many refinements (default 24)')
    p.add_argument('--seed', type=int, default=0, help='random seed (default 0)')
    p.add_argument('--send', metavar='ACTION',
                   help='send the goal to this FollowJointTrajectory action and record')
    p.add_argument('--record', metavar='BAG', help='with --send: the bag to record')
    p.add_argument('--topics', nargs='+', default=['actuator_states', 'joint_states'],
                   help='with --send: the topics recorded (default actuator_states '
                        'joint_states)')
    p.add_argument('--namespace', default='',
                   help='with --send: the namespace the action and topic names resolve in')
    return p


def main(argv=None):
    """Run the tool; return the exit code."""
    return cli.run(PROG, _run, parser().parse_args(argv))


_Failure = cli.Failure


def _run(args):
    from ..identification import excitation
    from ..identification.problem import Problem
    from ..kinematics import load_model, ModelError
    from ..transmissions import ConfigError, load_transmissions
    _check(args)
    try:
        model = load_model(args.model)
        tset = load_transmissions(args.transmissions) if args.transmissions else None
        problem = Problem(model, tset)
    except (ModelError, ConfigError, OSError) as exc:
        raise _Failure(str(exc)) from None
    names = list(tset.joint_names) if tset is not None else list(model.joint_names)
    sender = None
    if args.send:
        from .excite_send import Sender
        sender = Sender(args.send, args.topics, args.namespace)
    excited = list(args.joints or names)
    unknown = [j for j in excited if j not in names]
    if unknown:
        raise _Failure(f'--joints: {", ".join(unknown)} not among the joints '
                       f'({", ".join(names)})')
    try:
        start = _start(args, model, tset, names, sender)
        if not args.start:
            start = _inside(start, excitation.Limits(model, tset, names), names)
        base = np.asarray(model.default_positions, float).copy()
        base[[model.joint_names.index(j) for j in names]] = start
        limits = excitation.Limits(model, tset, excited, args.max_acceleration, base)
        first = start[[names.index(j) for j in excited]]
        still = np.zeros((len(excited), 1))
        outside = limits.violation(excitation.Excitation(excited, first, args.period, still,
                                                         still), np.zeros(1))
        if outside:
            raise _Failure(f'the start pose is outside a limit: {outside}')
        try:
            best, cond = excitation.optimise(problem, limits, excited, first, args.period,
                                             args.harmonics, args.candidates, args.candidates,
                                             args.seed)
        except ValueError as exc:
            raise _Failure(str(exc)) from None
        periods = max(1, math.ceil(args.duration / args.period - 1e-9))
        text = goal_yaml(best, limits, names, periods, args.lead_in, args.point_step)
        print(f'{len(excited)} joints excited, {periods} period(s) of {args.period:g} s, '
              f'{args.harmonics} harmonics: regressor condition number {cond:.3g}')
        if len(text.encode()) > ARGUMENT_LIMIT:
            print(f'note: the goal is {len(text) // 1024} KiB, more than the '
                  f'{ARGUMENT_LIMIT // 1024} KiB one argument may have: ros2 action send_goal '
                  '"$(cat GOAL)" will fail; lengthen --point-step or use --send')
        from ..bag.io import atomic_file
        tmp, commit = atomic_file(args.output)
        tmp.write_text(text)
        commit()
        print(f'wrote {args.output}')
        if sender is not None:
            code, message = sender.run(text, args.record, args.lead_in + periods * args.period)
            if code != 0:
                raise _Failure(f'the goal did not succeed ({message}); no bag written')
            print(f'goal succeeded; wrote {args.record}')
    finally:
        if sender is not None:
            sender.close()
    return 0


def _check(args):
    if not (args.duration > 0 and args.period > 0 and args.point_step > 0
            and args.lead_in > 0):
        raise _Failure('--duration, --period, --point-step and --lead-in must be > 0')
    if args.harmonics < 2:
        raise _Failure(f'--harmonics must be at least 2, got {args.harmonics}')
    if args.max_acceleration is not None and not args.max_acceleration > 0:
        raise _Failure(f'--max-acceleration must be > 0, got {args.max_acceleration}')
    if args.send and not args.record:
        raise _Failure('--send needs --record BAG (the bag identify --dynamic reads)')
    if args.record and not args.send:
        raise _Failure('--record goes with --send')
    inputs = {pathlib.Path(p).resolve() for p in (args.model, args.transmissions) if p}
    if pathlib.Path(args.output).resolve() in inputs:
        raise _Failure(f'--output {args.output} is an input; give another file')
    for flag, value in (('--output', args.output), ('--record', args.record)):
        if value and not pathlib.Path(value).resolve().parent.is_dir():
            raise _Failure(f'{flag}: no folder {pathlib.Path(value).parent}')
    if args.record and pathlib.Path(args.record).exists():
        raise _Failure(f'--record {args.record} already exists')


def _start(args, model, tset, names, sender):
    """Return the start pose: --start, the measured one (--send), or the defaults."""
    if args.start:
        try:
            values = [float(x) for x in args.start.split(',')]
        except ValueError:
            raise _Failure(f'--start must be numbers separated by commas, got {args.start!r}') \
                from None
        if len(values) != len(names):
            raise _Failure(f'--start has {len(values)} positions; the joints are {len(names)}: '
                           + ', '.join(names))
        return np.array(values)
    if sender is not None:
        measured = sender.measured_pose(names)
        if measured is None:
            raise _Failure('no joint_states naming every joint within 10 s: is the bridge '
                           'running? (or give --start)')
        return measured
    if tset is not None:
        return np.array([tset.joint(j).default_position for j in names])
    return np.asarray(model.default_positions, float)


def _inside(start, limits, names, fraction=INSIDE):
    """
    Return ``start`` with each joint at least ``fraction`` of its range inside its limits.

    A default pose often sits on a limit (a URDF's zero outside the range, clamped to it),
    and no motion starts there: the lead-in moves the robot to the pose inside. Prints the
    joints it moved.
    """
    lo, hi = limits.lower, limits.upper
    span = np.where(np.isfinite(hi - lo), hi - lo, 0.0)
    inner = np.clip(start, lo + fraction * span, hi - fraction * span)
    moved = np.flatnonzero(np.abs(inner - start) > 1e-12)
    if len(moved):
        print('start pose moved inside the limits (the lead-in goes there): ' + ', '.join(
            f'{names[k]} {start[k]:.4g} -> {inner[k]:.4g}' for k in moved))
    return inner


def goal_yaml(excitation, limits, names, periods, lead_in, step):
    """
    Return the FollowJointTrajectory goal (YAML) of the excitation after a lead-in.

    Every joint of ``names`` is in the goal: the excited ones follow the excitation, the
    others hold ``limits.base``. Each point's efforts are the model's inverse dynamics
    there with the joint side's rotors (``effort_law.joint_side``: the links' and the ideal
    stages' rotors; the bridge's one commanded law adds the damping, gear losses, friction
    and the other rotors), the springs' or the motors' feed-forward.
    """
    model = limits.model
    side = None if limits.tset is None else effort_law.joint_side(limits.tset)
    duration = periods * excitation.period
    times = np.arange(1, int(round(duration / step)) + 1) * step
    Q, V, A = limits.full(*excitation.sample(times))
    still = np.zeros((1, len(excitation.joint_names)))
    rest = limits.full(excitation.start[None], still, still)      # the start pose, at rest
    Q[-1], V[-1], A[-1] = rest[0][0], 0.0, 0.0                      # exactly back at rest
    columns = [model.joint_names.index(j) for j in names]
    hold = model.inverse_dynamics(*rest, side)[0]
    efforts = model.inverse_dynamics(Q, V, A, side)
    lines = ['trajectory:', f'  joint_names: [{", ".join(names)}]', '  points:']
    zeros = np.zeros(len(names))
    rows = [(lead_in, rest[0][0, columns], zeros, zeros, hold[columns])]
    rows += [(lead_in + t, Q[k, columns], V[k, columns], A[k, columns], efforts[k, columns])
             for k, t in enumerate(times)]
    for t, p, vel, acc, eff in rows:
        sec = int(math.floor(t + 1e-9))
        nanosec = int(round((t - sec) * 1e9))
        if nanosec >= 1_000_000_000:
            sec, nanosec = sec + 1, nanosec - 1_000_000_000
        lines.append(f'  - {{positions: [{_numbers(p)}], velocities: [{_numbers(vel)}], '
                     f'accelerations: [{_numbers(acc)}], effort: [{_numbers(eff)}], '
                     f'time_from_start: {{sec: {sec}, nanosec: {nanosec}}}}}')
    return '\n'.join(lines) + '\n'


def _numbers(values):
    """Return the values as YAML flow items, each the shortest text that reads back exactly."""
    return ', '.join(repr(float(x)) for x in values)


def console():
    """Console-script entry point (``transmission_bridge_identify excite``)."""
    sys.exit(main())
