"""
transmission_bridge_convert: apply transmissions (and a model) to recorded bags, offline.

One bag:    transmission_bridge_convert IN_BAG OUT_BAG --transmissions FILE [--model FILE]
Many bags:  transmission_bridge_convert IN_BAG_OR_FOLDER ... --output-dir OUT_DIR
            --transmissions FILE [--model FILE] [--workers N | --scheduler ADDRESS]

Reads every actuator-state message (sensor_msgs/JointState with actuator names) and
writes a bag with every other topic unchanged, the joint_states the live bridge
would publish (same stamps) and, with --model, the kinematics node's gravity
torques and each motor's holding torque on /actuator_commands (what the bridge
publishes when robot.launch.py feeds it the gravity torques; --keep-input also
keeps the actuator states). No ROS graph is needed. Outputs appear only when
complete.

With --output-dir, each input bag (or every bag found below an input folder) is
converted on Dask: an embedded cluster of --workers processes (default: one per
core), or the cluster whose scheduler is at --scheduler (its workers must see the
same files). One output per bag, named after it; a summary row per bag (duration,
messages, rejected and non-finite values, stale gaps, per joint position range and
largest holding torque) goes to --summary (Parquet, or CSV) with a PNG overview
beside it. A bag that fails is reported and the others go on (exit code 1); a rerun
skips bags already converted.
"""

import argparse
import pathlib
import shutil
import signal
import sys
import time

from . import cli

PROG = 'transmission_bridge_convert'
DASK = ('distributed', 'pip install "dask[distributed]"')
PYARROW = ('pyarrow', 'pip install pyarrow, or give --summary FILE.csv')


def parser():
    """Return the argument parser."""
    p = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('bags', nargs='+', metavar='BAG',
                   help='IN_BAG OUT_BAG; or, with --output-dir, input bags and folders of bags')
    p.add_argument('--transmissions', required=True, help='transmissions YAML or URDF')
    p.add_argument('--model', help='robot model YAML or URDF: also write gravity and motor '
                                   'holding torques')
    p.add_argument('--topic', default='/actuator_states', help='actuator-state topic')
    p.add_argument('--joint-states-topic', default='/joint_states')
    p.add_argument('--gravity-topic', default='/kinematics/gravity_torques')
    p.add_argument('--commands-topic', default='/actuator_commands',
                   help='with --model: motor holding torques (actuator names)')
    p.add_argument('--storage', choices=('mcap', 'sqlite3'), default='mcap')
    p.add_argument('--keep-input', action='store_true',
                   help='also copy the actuator-state topic (default: replaced by joint_states)')
    p.add_argument('--plot', metavar='OUT.png', help='one bag: also draw positions and torques')
    p.add_argument('--quiet', action='store_true', help='no summary line')
    fleet = p.add_argument_group('many bags (Dask)')
    fleet.add_argument('--output-dir', type=pathlib.Path,
                       help='convert every BAG into this folder (created if missing)')
    cli.add_engine_arguments(fleet)
    fleet.add_argument('--summary', type=pathlib.Path,
                       help='summary table: .parquet or .csv (default: OUT_DIR/summary.parquet, '
                            'or summary.csv without pyarrow); the overview PNG goes beside it')
    fleet.add_argument('--stale-timeout', type=float, default=0.5,
                       help='a pause between actuator states longer than this (s) counts as a '
                            'stale gap (the bridge parameter stale_timeout)')
    return p


def main(argv=None):
    """Run the tool; return the exit code (0 ok, 1 error or failed bags, 130 interrupted)."""
    p = parser()
    args = p.parse_args(argv)
    if args.output_dir is None:
        if len(args.bags) != 2:
            p.error('give IN_BAG OUT_BAG, or input bags with --output-dir OUT_DIR')
        for flag in ('workers', 'scheduler', 'summary'):
            if getattr(args, flag) is not None:
                p.error(f'--{flag} needs --output-dir')
        return _one(args)
    if args.plot:
        p.error('--plot is for one bag; with --output-dir the summary has its own PNG')
    if args.workers is not None and args.workers < 1:
        p.error(f'--workers must be at least 1, got {args.workers}')
    if not args.stale_timeout > 0:
        p.error(f'--stale-timeout must be > 0, got {args.stale_timeout}')
    return _many(args)


def _load(args):
    """Return the transmissions and model; what their loaders assumed goes to stderr, once."""
    from ..kinematics import load_model
    from ..transmissions import load_transmissions
    tset = load_transmissions(args.transmissions)
    model = load_model(args.model) if args.model else None
    for path, warnings in ((args.transmissions, tset.warnings),
                           (args.model, model.warnings if model else ())):
        for warning in warnings:
            print(f'{PROG}: warning: {path}: {warning}', file=sys.stderr)
    return tset, model


def _noted_interrupts():
    """
    Return a list that SIGINT appends to; the conversion stops at its next checkpoint.

    Raising KeyboardInterrupt from the handler, as Python does by default, can raise it
    inside a library's callback (numba compiling, through ctypes), where Python prints
    "Exception ignored" with a traceback and carries on: the conversion instead checks the
    list at every progress step and once it is done (:func:`_checked`). Where SIGINT is
    ignored (a background job) nothing changes.
    """
    seen = []
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, lambda signum, frame: seen.append(signum))
    return seen


def _checked(progress, interrupts):
    """Return ``progress`` that first raises KeyboardInterrupt once Ctrl-C was pressed."""
    def step(what, done, total):
        if interrupts:
            raise KeyboardInterrupt
        progress(what, done, total)
    return step


def _one(args):
    missing = cli.missing_dependency(cli.ROSBAGS, *([cli.MATPLOTLIB] if args.plot else []))
    if missing:
        return cli.fail(PROG, missing)
    from ..bag.convert import convert_bag
    from ..bag.errors import BagError
    from ..kinematics import ModelError
    from ..transmissions import ConfigError
    in_bag, out_bag = args.bags
    progress = cli.Progress()
    interrupts = _noted_interrupts()
    try:
        tset, model = _load(args)
        if interrupts:
            raise KeyboardInterrupt
        result = convert_bag(in_bag, out_bag, tset, model, args.topic,
                             args.joint_states_topic, args.gravity_topic, args.storage,
                             _checked(progress, interrupts), args.keep_input,
                             args.commands_topic)
        if interrupts:      # Ctrl-C after the last checkpoint: the output goes
            shutil.rmtree(out_bag, ignore_errors=True)
            raise KeyboardInterrupt
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
              f'wrote {out_bag}' + (f' and {args.plot}' if args.plot else ''))
    if result.refused_linkage:
        print(f'{PROG}: warning: {result.refused_linkage} linkage states refused (not '
              'converged, singular, past a joint limit, or unknown): their joints are left '
              'out of those joint_states, as the bridge does', file=sys.stderr)
    return 0


def _summary_path(args):
    if args.summary is not None:
        return args.summary
    name = 'summary.csv' if cli.missing_dependency(PYARROW) else 'summary.parquet'
    return args.output_dir / name


def _many(args):
    summary = _summary_path(args)
    if summary.suffix not in ('.parquet', '.csv'):
        return cli.fail(PROG, f'--summary must end in .parquet or .csv, got {str(summary)!r}')
    missing = cli.missing_dependency(cli.ROSBAGS, cli.MATPLOTLIB, DASK, *(
        [PYARROW] if summary.suffix == '.parquet' else []))
    if missing:
        return cli.fail(PROG, missing)
    from ..bag import fleet
    from ..bag.errors import BagError
    from ..kinematics import ModelError
    from ..transmissions import ConfigError
    options = {'topic': args.topic, 'joint_states_topic': args.joint_states_topic,
               'gravity_topic': args.gravity_topic, 'commands_topic': args.commands_topic,
               'storage': args.storage, 'keep_input': args.keep_input,
               'stale_timeout': args.stale_timeout}
    engine = None
    progress = FleetProgress()
    started = time.monotonic()
    try:
        tset, model = _load(args)
        jobs = fleet.find_jobs(args.bags, args.output_dir)
        args.output_dir.mkdir(parents=True, exist_ok=True)
        engine = fleet.Engine(args.workers, args.scheduler)
        workers = engine.num_workers
        rows = fleet.run(jobs, tset, model, options, engine, progress)
        progress.done()
        fleet.write_summary(rows, summary)
        overview = summary.with_suffix('.png')
        fleet.plot_summary(rows, overview)
    except (BagError, ConfigError, ModelError, OSError) as exc:
        progress.done()
        return cli.fail(PROG, exc)
    except KeyboardInterrupt:
        progress.done()
        return cli.fail(PROG, 'interrupted; bags already converted are complete and kept, the '
                              'rest left no output (run again to continue)', 130)
    finally:
        if engine is not None:
            engine.close()
    failed = [r for r in rows if r['status'] == fleet.STATUS_FAILED]
    earlier = sum(r['status'] == fleet.STATUS_EARLIER for r in rows)
    messages = sum(r.get('messages', 0) for r in rows if r['status'] == fleet.STATUS_CONVERTED)
    seconds = time.monotonic() - started
    if not args.quiet:
        print(f'{len(rows) - len(failed) - earlier} bags converted'
              + (f', {earlier} converted earlier' if earlier else '')
              + (f', {len(failed)} failed' if failed else '')
              + f' on {workers} workers: {messages:,} messages in {seconds:.1f} s '
              f'({messages / max(seconds, 1e-9):,.0f} messages/s); wrote {args.output_dir}, '
              f'{summary} and {overview}')
    if failed:
        for row in failed[:5]:
            print(f'{PROG}: {row["bag"]}: {row["error"]}', file=sys.stderr)
        return cli.fail(PROG, f'{len(failed)} of {len(rows)} bags failed (their rows in '
                              f'{summary} say why)')
    return 0


class FleetProgress:
    """Bags done/total, failures and throughput on one stderr line (a terminal only)."""

    def __init__(self):
        self._line = cli.Progress()

    def __call__(self, done, total, failed, rate):
        """Show the state after a bag finished."""
        self._line(f'bags{" (" + str(failed) + " failed)" if failed else ""} '
                   f'{rate:,.0f} msg/s', done, total)

    def done(self):
        """End the progress line."""
        self._line.done()


def console():
    """Console-script entry point: exit with :func:`main`'s code."""
    sys.exit(main())


if __name__ == '__main__':
    sys.exit(main())
