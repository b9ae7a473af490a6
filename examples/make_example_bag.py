"""Regenerate examples/example_robot_bag: 3 s of the example arm's actuator states at 100 Hz."""

import pathlib
import shutil
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from transmission_bridge.bag.example import write_actuator_bag  # noqa: E402
from transmission_bridge.transmissions import load_transmissions  # noqa: E402

if __name__ == '__main__':
    out = HERE / 'example_robot_bag'
    shutil.rmtree(out, ignore_errors=True)
    tset = load_transmissions(HERE.parent / 'config' / 'example_robot_transmissions.yaml')
    count = write_actuator_bag(out, tset, seconds=3.0, rate=100.0, storage='mcap')
    print(f'wrote {count} actuator states to {out}')
