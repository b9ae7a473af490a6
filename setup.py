"""ament_python package set-up: the two libraries, the nodes, launch and config files."""

from glob import glob
import os

from setuptools import find_packages, setup

package_name = 'transmission_bridge'

setup(
    name=package_name,
    version='0.7.0',
    packages=find_packages(exclude=['test', 'test.*', 'bench']),
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
        (os.path.join('share', package_name, 'launch'), glob('launch/*.launch.py')),
        (os.path.join('share', package_name, 'config'), glob('config/*.yaml')
         + glob('config/*.urdf')),
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
    extras_require={'fast': ['numba>=0.59'],
                    'test': ['pytest', 'hypothesis', 'pin', 'example-robot-data', 'rosbags',
                             'matplotlib', 'psutil', 'drake',
                             'dask[distributed]', 'pyarrow']},
    entry_points={
        'console_scripts': [
            'transmission_bridge = transmission_bridge.bridge.node:main',
            'kinematics = transmission_bridge.robot_state.node:main',
            'actuator_simulator = transmission_bridge.tools.actuator_simulator:main',
            'transmission_bridge_replay = transmission_bridge.tools.replay:console',
            'transmission_bridge_record = transmission_bridge.tools.record:console',
            'transmission_bridge_convert = transmission_bridge.tools.convert:console',
            'transmission_bridge_identify = transmission_bridge.tools.identify:console',
        ],
    },
)
