"""
A/B: one benchmark script run on two checkouts in turn, in one session, and the ratios.

    python bench/ab.py --before /path/to/old/checkout --rounds 3 -- bench_nodes.py --number 2000

Runs ``bench/SCRIPT`` of each checkout (``--before`` and this one) alternately (which goes
first alternates too), each with that checkout first on ``PYTHONPATH``, so its nodes and
libraries are the ones measured; every run writes its own results file, which this script
reads back. For every row and numeric column it reports the median of each side over the
rounds, the after/before ratio of the medians, and the spread (max/min) of each side's
runs: the noise a ratio must beat before it means anything. The old checkout must have the
script (``git worktree add /tmp/before <commit>`` makes one); the table goes to
``results/ab_<script>.json``.
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys

from common import report

HERE = pathlib.Path(__file__).resolve().parent


def _run(root, script, args, name):
    """Run ``script`` of checkout ``root``; return the rows of its results file ``name``."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(root), os.environ.get('PYTHONPATH', '')]))
    cmd = [sys.executable, str(root / 'bench' / script), *args]
    if '--results' not in args and script == 'bench_latency.py':
        cmd += ['--results', name]
    done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f'{root}: {" ".join(cmd[1:])} failed:\n{done.stdout}\n{done.stderr}')
    path = root / 'bench' / 'results' / f'{name}.json'
    return json.loads(path.read_text())['rows']


def _key(row, columns):
    return ' / '.join(str(row[c]) for c in columns)


def main(argv=None):
    """Run the A/B and print the table."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--before', type=pathlib.Path, required=True,
                        help='the other checkout (a git worktree of the commit before)')
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--results', required=True,
                        help="the results name the script writes (e.g. 'nodes', 'latency')")
    parser.add_argument('--keys', nargs='+', required=True,
                        help='columns that name a row (e.g. what, or target node rate_hz)')
    parser.add_argument('--values', nargs='+', required=True, help='numeric columns compared')
    parser.add_argument('script', help='a bench_*.py of both checkouts')
    parser.add_argument('args', nargs=argparse.REMAINDER, help='its arguments (after --)')
    args = parser.parse_args(argv)
    sides = {'before': args.before.resolve(), 'after': HERE.parent}
    script_args = [a for a in args.args if a != '--']
    runs = {side: [] for side in sides}
    for r in range(args.rounds):
        for side in (('before', 'after') if r % 2 == 0 else ('after', 'before')):
            runs[side].append(_run(sides[side], args.script, script_args, args.results))
            print(f'round {r + 1}: {side} done', file=sys.stderr)
    rows = []
    for row in runs['after'][0]:
        key = _key(row, args.keys)
        for column in args.values:
            got = {side: [x[column] for rows_ in runs[side] for x in rows_
                          if _key(x, args.keys) == key and isinstance(x.get(column),
                                                                      (int, float))]
                   for side in sides}
            if not got['before'] or not got['after']:
                continue
            before, after = (statistics.median(got[s]) for s in ('before', 'after'))
            rows.append({'row': key, 'column': column, 'before': before, 'after': after,
                         'after/before': after / before if before else float('nan'),
                         'spread_before': max(got['before']) / min(got['before'])
                         if min(got['before']) > 0 else float('nan'),
                         'spread_after': max(got['after']) / min(got['after'])
                         if min(got['after']) > 0 else float('nan')})
    report(f'ab_{args.results}', rows, ['row', 'column', 'before', 'after', 'after/before',
                                        'spread_before', 'spread_after'])


if __name__ == '__main__':
    main()
