"""
Offline conversion against a plain copy of the same bag, in the same run.

A bag of N actuator-state messages (12 actuators, position/velocity/effort) is
converted with ``convert_bag`` (joint states added, everything copied through);
the floor is reading every message and writing it to a new bag with rosbags.
Goal: conversion at most 1.5x the copy, i.e. limited by reading and writing.
"""

import argparse
import pathlib
import shutil
import tempfile
import time

from common import report
from robots import transmissions_12

from transmission_bridge.bag import io
from transmission_bridge.bag.convert import convert_bag
from transmission_bridge.bag.example import write_actuator_bag


def plain_copy(src, dst, storage):
    """Read every message of ``src`` and write it unchanged to a new bag ``dst``."""
    reader = io.open_reader(src)
    try:
        with io.atomic_writer(dst, storage) as writer:
            conns = {c.id: writer.add_connection(
                c.topic, c.msgtype, msgdef=c.msgdef.data, rihs01=c.digest)
                for c in reader.connections}
            for c, stamp, raw in io.iter_messages(reader):
                writer.write(conns[c.id], stamp, raw)
    finally:
        reader.close()


def main(argv=None):
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--messages', type=int, default=1_000_000)
    parser.add_argument('--storage', choices=('mcap', 'sqlite3'), default='mcap')
    args = parser.parse_args(argv)
    tset = transmissions_12()
    work = pathlib.Path(tempfile.mkdtemp(prefix='bench_bag_'))
    try:
        src = work / 'in'
        start = time.perf_counter()
        write_actuator_bag(src, tset, seconds=args.messages / 1000.0, rate=1000.0,
                           storage=args.storage)
        t_write = time.perf_counter() - start
        rows = []
        for trial in range(2):
            start = time.perf_counter()
            plain_copy(src, work / f'copy{trial}', args.storage)
            t_copy = time.perf_counter() - start
            start = time.perf_counter()
            result = convert_bag(src, work / f'conv{trial}', tset, storage=args.storage)
            t_conv = time.perf_counter() - start
            assert result.joint_states == args.messages and result.vectorised
            rows.append({'messages': args.messages, 'storage': args.storage,
                         'copy_s': t_copy, 'convert_s': t_conv, 'ratio': t_conv / t_copy})
        print(f'(writing the {args.messages:,}-message input took {t_write:.1f} s)')
        report('bag_convert', rows, ['messages', 'storage', 'copy_s', 'convert_s', 'ratio'])
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
