"""ament_python package set-up: the two libraries, the nodes, launch and config files."""

from glob import glob
import os
import subprocess
import sys

from setuptools import find_packages, setup
from setuptools.command.install import install

package_name = 'transmission_bridge'

HERE = os.path.dirname(os.path.abspath(__file__))


class InstallWarm(install):
    """
    Install, then fill numba's cache of the installed package (``colcon build``).

    numba compiles the linkage and kinematics kernels on first use and caches them beside
    the installed sources; doing it here makes a node's first start after install warm. A
    staged install (a wheel: ``--root``) is left alone, its cache would name the stage; a
    failure is a warning, never a failed install (without numba the numpy code runs).
    """

    def run(self):
        super().run()
        if self.root:
            return
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [os.path.abspath(self.install_lib), os.environ.get('PYTHONPATH', '')]))
        done = subprocess.run(
            [sys.executable, '-m', 'transmission_bridge.tools.warm_up', '--transmissions',
             os.path.join(HERE, 'config', 'legged_robot.urdf'), '--model',
             os.path.join(HERE, 'config', 'example_arm_model.yaml')],
            cwd=self.install_lib, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True)
        out = done.stdout.strip()
        if done.returncode == 0:
            print(out)
        else:
            print('transmission_bridge: numba kernels not compiled at install (a first start '
                  'compiles them): ' + (out.splitlines() or [''])[-1])


setup(
    name=package_name,
    version='0.8.0',
    packages=find_packages(exclude=['test', 'test.*', 'bench']),
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
        (os.path.join('share', package_name, 'launch'), glob('launch/*.launch.py')),
        (os.path.join('share', package_name, 'config'), glob('config/*.yaml')
         + glob('config/*.urdf') + glob('config/*.xml')),
        (os.path.join('share', package_name, 'examples', 'example_robot_bag'),
         glob('examples/example_robot_bag/*')),
    ],
    install_requires=['setuptools', 'numpy', 'PyYAML'],
    zip_safe=True,
    maintainer='transmission_bridge maintainers',
    maintainer_email='maintainers@transmission-bridge.invalid',
    description='Actuator/joint transmissions and chain kinematics for ROS 2 Jazzy.',
    license='Apache-2.0',
    # colcon test runs pytest when it finds pytest here (setuptools >= 72 ignores tests_require,
    # and colcon then falls back to unittest and runs nothing). The same list as package.xml.
    # numba: the kinematics library's compiled kernels (humanoids at Pinocchio's speed); the
    # numpy code runs without it, with the same results.
    extras_require={'fast': ['numba>=0.59'], 'identify': ['clarabel', 'scipy'],
                    'test': ['pytest', 'hypothesis', 'pin', 'example-robot-data', 'rosbags',
                             'matplotlib', 'psutil', 'drake',
                             'dask[distributed]', 'pyarrow', 'mujoco', 'clarabel',
                             'scipy']},
    cmdclass={'install': InstallWarm},
    entry_points={
        'console_scripts': [
            'transmission_bridge = transmission_bridge.bridge.node:main',
            'kinematics = transmission_bridge.kinematics_node.node:main',
            'robot_stack = transmission_bridge.robot_stack:main',
            'actuator_simulator = transmission_bridge.tools.actuator_simulator:main',
            'transmission_bridge_replay = transmission_bridge.tools.replay:console',
            'transmission_bridge_record = transmission_bridge.tools.record:console',
            'transmission_bridge_convert = transmission_bridge.tools.convert:console',
            'transmission_bridge_identify = transmission_bridge.tools.identify:console',
        ],
    },
)
