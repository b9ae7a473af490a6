"""Run every benchmark script in this folder, one after the other."""

import pathlib
import runpy
import sys

HERE = pathlib.Path(__file__).resolve().parent

if __name__ == '__main__':
    sys.path.insert(0, str(HERE))
    for script in sorted(HERE.glob('bench_*.py')):
        print(f'\n=== {script.name}')
        sys.argv = [str(script)]
        runpy.run_path(str(script), run_name='__main__')
