"""
Fill numba's disk cache with the package's compiled kernels, so that a node's first start is warm.

    python -m transmission_bridge.tools.warm_up [--transmissions FILE] [--model FILE]

numba compiles a kernel on its first call and keeps it in a cache beside the package's
sources (or in ``NUMBA_CACHE_DIR``); a node started on an empty cache compiles before it
publishes (seconds on a slow machine). ``make test`` runs this after installing, and so does
an install of the package (``colcon build``, ``pip install``): the linkage loops through a
set with linkages (default: the package's legged robot) and the kinematics kernels,
dynamics and the identification's regressor through a model (default: the example arm).
Without numba there is nothing to
compile: it says so and exits 0. A kernel is compiled for the kinds of arrays it is called
with, not per robot: any robot with a linkage warms them for every other. The gear stages'
loss loops, the linkage loops, a goal's step and the kinematics' chain algorithms are compiled
ahead of time into modules that import no numba (:mod:`transmission_bridge._shared.ahead`): the
bridge and the kinematics node then load neither numba nor LLVM (the just-in-time kernels
warmed here serve where those cannot be built).
"""

import argparse
import importlib.util
import pathlib
import sys
import time

CONFIG = pathlib.Path(__file__).resolve().parent.parent.parent / 'config'


def _config(name):
    """Return a shipped robot file: the source tree's, else the installed share folder's."""
    path = CONFIG / name
    if path.exists():
        return str(path)
    from ament_index_python.packages import get_package_share_directory
    return str(pathlib.Path(get_package_share_directory('transmission_bridge')) / 'config'
               / name)


def warm(transmissions, model_file):
    """Compile (or load) the kernels; return ``[(what, seconds)]``."""
    from ..mapping.warm_up import warm_up
    from ..kinematics import load_model
    from ..kinematics_node.dynamics import warm_up_dynamics
    from .._shared import ahead
    from ..transmissions import load_transmissions
    start = time.perf_counter()
    done = []
    try:            # optional: without a C linker the just-in-time loops serve, as before
        ahead.build_all([name for name, each in ahead.SETS.items() if each.load() is None])
        done.append(('gear-loss, linkage, goal and kinematics loops, ahead of time',
                     time.perf_counter() - start))
    except Exception as exc:  # noqa: B902 (said, and the warm-up goes on)
        print(f'loops not compiled ahead of time ({type(exc).__name__}: {exc}): '
              "numba's just-in-time loops serve instead", file=sys.stderr)
    done.append(('linkage kernels', warm_up(load_transmissions(transmissions))))
    start = time.perf_counter()
    model = load_model(model_file).with_kernels('numba')
    model.warm_up()
    warm_up_dynamics(model)
    done.append(('kinematics and dynamics kernels', time.perf_counter() - start))
    start = time.perf_counter()
    from ..kinematics import regressor
    still = [[0.0] * model.num_positions]
    regressor.regressor(model, still, still, still, kernels='numba')
    done.append(('dynamic identification kernel', time.perf_counter() - start))
    return done


def main(argv=None):
    """Run the warm-up; exit status 0 unless a kernel failed to compile."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--transmissions', help='a transmissions file with a linkage')
    parser.add_argument('--model', help='a robot model file')
    args = parser.parse_args(argv)
    if importlib.util.find_spec('numba') is None:
        print('numba is not installed: nothing to compile (the numpy code runs)')
        return 0
    try:
        done = warm(args.transmissions or _config('legged_robot.urdf'),
                    args.model or _config('example_arm_model.yaml'))
    except Exception as exc:  # noqa: B902 (a build step: say what failed, in one line)
        print(f'warm-up failed: {type(exc).__name__}: {exc}', file=sys.stderr)
        return 1
    for what, seconds in done:
        print(f"{what}: ready in {seconds:.2f} s (compiled, or loaded from numba's cache)")
    return 0


if __name__ == '__main__':
    sys.exit(main())
