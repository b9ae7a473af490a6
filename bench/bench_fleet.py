"""
Fleet conversion on Dask: 1 worker against 2, and the engine against a plain loop.

BAGS bags of MESSAGES actuator states each (the example robot, 7 actuators) are
converted three ways, each into a fresh output folder: a plain loop in this
process calling the same per-bag function the Dask tasks run
(``fleet.convert_one``: ``convert_bag`` plus the summary row), then ``fleet.run``
on an embedded cluster of 1 and of 2 workers. Reported: throughput in messages/s
(cluster start-up, also shown alone, included), the scaling ratio of 2 workers over 1 (goal >= 1.7x
on 2 cores), the engine's overhead over the loop at 1 worker (goal <= 1.1x), and
each worker's peak resident memory, measured for a tenth of the bags and for all
of them (bounded by one bag's working set: the two should match).
"""

import argparse
import os
import pathlib
import shutil
import sys
import tempfile
import time

from common import report

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

OPTIONS = {'topic': '/actuator_states', 'joint_states_topic': '/joint_states',
           'gravity_topic': '/kinematics/gravity_torques', 'commands_topic': '/actuator_commands',
           'storage': 'mcap', 'keep_input': False, 'stale_timeout': 0.5}


def _peak_rss_mb():
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _on_engine(jobs, tset, model, workers):
    from transmission_bridge.bag import fleet
    start = time.perf_counter()
    engine = fleet.Engine(workers)
    startup = time.perf_counter() - start
    try:
        rows = fleet.run(jobs, tset, model, OPTIONS, engine)
        peaks = engine.client.run(_peak_rss_mb)
    finally:
        engine.close()
    seconds = time.perf_counter() - start
    assert all(r['status'] == fleet.STATUS_CONVERTED for r in rows), rows
    return seconds, startup, sum(r['messages'] for r in rows), max(peaks.values())


def main(argv=None):
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--bags', type=int, default=200)
    parser.add_argument('--messages', type=int, default=10_000)
    parser.add_argument('--model', action='store_true',
                        help='also compute gravity and motor holding torques')
    args = parser.parse_args(argv)
    from transmission_bridge.bag import fleet
    from transmission_bridge.bag.example import write_actuator_bag
    from transmission_bridge.kinematics import load_model
    from transmission_bridge.transmissions import load_transmissions
    config = HERE.parent / 'config'
    tset = load_transmissions(config / 'example_robot_transmissions.yaml')
    model = load_model(config / 'example_arm_model.yaml') if args.model else None
    work = pathlib.Path(tempfile.mkdtemp(prefix='bench_fleet_'))
    try:
        source = work / 'fleet'
        source.mkdir()
        rate = 500.0
        for k in range(args.bags):
            write_actuator_bag(source / f'bag{k:04d}', tset, seconds=args.messages / rate,
                               rate=rate)

        def jobs(name, count=args.bags):
            # The previous run's outputs go, and their dirty pages reach the disk first:
            # otherwise each run pays for the last one's write-back.
            for old in work.iterdir():
                if old != source:
                    shutil.rmtree(old)
            os.sync()
            return fleet.find_jobs(sorted(source.iterdir())[:count], work / name)

        rows = []
        loop_jobs = jobs('loop')
        start = time.perf_counter()
        messages = sum(fleet.convert_one(j, tset, model, OPTIONS)['messages'] for j in loop_jobs)
        loop_s = time.perf_counter() - start
        rows.append({'engine': 'plain loop', 'workers': 1, 'bags': args.bags,
                     'messages': messages, 'seconds': loop_s, 'startup_s': 0.0,
                     'messages_per_s': messages / loop_s, 'vs_loop': 1.0,
                     'scaling': float('nan'), 'worker_peak_rss_mb': _peak_rss_mb()})
        timed = {}
        for workers in (1, 2):
            seconds, startup, messages, peak = _on_engine(jobs(f'dask{workers}'), tset, model,
                                                          workers)
            timed[workers] = seconds
            rows.append({'engine': 'dask', 'workers': workers, 'bags': args.bags,
                         'messages': messages, 'seconds': seconds, 'startup_s': startup,
                         'messages_per_s': messages / seconds, 'vs_loop': seconds / loop_s,
                         'scaling': timed[1] / seconds, 'worker_peak_rss_mb': peak})
        tenth = max(1, args.bags // 10)
        seconds, startup, messages, peak = _on_engine(jobs('dask_tenth', tenth), tset, model, 2)
        rows.append({'engine': 'dask', 'workers': 2, 'bags': tenth, 'messages': messages,
                     'seconds': seconds, 'startup_s': startup,
                     'messages_per_s': messages / seconds,
                     'vs_loop': float('nan'), 'scaling': float('nan'),
                     'worker_peak_rss_mb': peak})
        report('fleet', rows, ['engine', 'workers', 'bags', 'messages', 'seconds', 'startup_s',
                               'messages_per_s', 'vs_loop', 'scaling', 'worker_peak_rss_mb'])
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
