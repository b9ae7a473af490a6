"""
The engine simulator's own parameters (``actuator_simulator`` with ``engine:=``), declared once.

Read-only, given at start-up; a value out of range stops start-up naming the key. The node's
table in doc/nodes.md is generated from these declarations.
"""

from ..ros.node_main import StartupError
from ..ros.parameters import declare


def declare_engine(node):
    """Declare the engines' own parameters; return them as a dict."""
    p = {}
    p['floating_base'] = declare(node, 'floating_base', False, bool, 'free the root body and '
                                 'add a ground plane if the model has none', read_only=True)
    p['lockstep'] = declare(node, 'lockstep', False, bool, 'each command advances one state '
                            'period and publishes one state', read_only=True)
    p['real_time_factor'] = declare(node, 'real_time_factor', 1.0, float, 'simulated seconds '
                                    'per wall second (<= 0: as fast as possible)',
                                    read_only=True)
    p['seed'] = declare(node, 'seed', 0, int, "seed of the drives' noise", read_only=True)
    p['clock_rate'] = declare(node, 'clock_rate', 0.0, float, 'rate of /clock, Hz (0: with '
                              'every state)', read_only=True, constraints='>= 0')
    if not p['clock_rate'] >= 0.0:
        raise StartupError(f"parameter 'clock_rate' must be a number >= 0, got "
                           f"{p['clock_rate']!r}")
    p['pose_rate'] = declare(node, 'pose_rate', 100.0, float, 'rate of ~/base_pose and /tf '
                             'when the base floats, Hz', read_only=True, constraints='> 0')
    if not p['pose_rate'] > 0.0:
        raise StartupError(f"parameter 'pose_rate' must be a number > 0, got {p['pose_rate']!r}")
    for name, default, text in (
            ('position_stiffness', 5.0, "position drives' stiffness, N*m/rad at the motor"),
            ('position_damping', 0.05, "position drives' damping, N*m*s/rad at the motor"),
            ('position_noise', 0.0, 'standard deviation of reported positions'),
            ('velocity_noise', 0.0, 'standard deviation of reported velocities'),
            ('effort_noise', 0.0, 'standard deviation of reported torques'),
            ('reset_hold', 1.0, 'after ~/reset, seconds of simulated time the robot is held '
             'at its start pose whatever is commanded; then the commands in force move it'),
            ('output_slip', 0.0, 'drift of every output encoder, rad/s (m/s) at the gear '
             'output: a slipping belt')):
        p[name] = declare(node, name, default, float, text, read_only=True, constraints='>= 0')
        if not p[name] >= 0.0:
            raise StartupError(f'parameter {name!r} must be a number >= 0, got {p[name]!r}')
    for name, text in (('encoder_counts', 'encoder counts per motor turn (0: exact)'),
                       ('delay', 'states between a measurement and its report'),
                       ('lockstep_ahead', 'with lockstep, states the simulator runs ahead of '
                        'the commands: 1 steps the next state on the command in force while '
                        'the bridge answers the last, so both run at once and a command takes '
                        'effect one state later (0: each command answers the last state)')):
        p[name] = declare(node, name, 0, int, text, read_only=True, constraints='>= 0')
        if p[name] < 0:
            raise StartupError(f'parameter {name!r} must be an integer >= 0, got {p[name]!r}')
    return p
