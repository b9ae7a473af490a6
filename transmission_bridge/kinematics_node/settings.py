"""
The kinematics node's own parameters (not the model's), as one table, and its usage text.

Declared by the node (:func:`~transmission_bridge.ros.settings.declare_settings`) and checked
by the same functions at start-up and for ``ros2 param set``; the per-model parameters
(``joints.*``, ``gravity``, ``payload.*``) are :mod:`transmission_bridge.kinematics.parameters`'.

>>> from ..ros.settings import refusal
>>> refusal(SETTINGS, [('publish_every.tf', -1)])
'publish_every.tf must be an integer >= 0, got -1'
"""

from ..ros.settings import finite_non_negative, finite_positive, one_of, Setting
from ..ros.settings import settings_by_name
from ..ros.settings import whole_non_negative

MODEL_FILE = 'model_file'
BASE_FRAME = 'base_frame'
TIP_LINKS = 'tip_links'
PUBLISH_EVERY = 'publish_every'
PUBLISH_FREQUENCY = 'publish_frequency'
FRAME_PREFIX = 'frame_prefix'
STALE_TIMEOUT = 'stale_timeout'
FEED_FORWARD = 'feed_forward'
FEED_FORWARDS = ('gravity', 'inverse_dynamics')
TRANSMISSIONS_FILE = 'transmissions_file'
OUTPUTS = ('gravity_torques', 'passive_torques', 'body_poses', 'tip_poses', 'potential_energy',
           'tf')
SOURCE_HELP = ('path of the robot model YAML or URDF (doc/formats.md); required unless '
               'robot_description is given', 'URDF of the robot, instead of model_file')

HELP = """
kinematics: joint_states -> gravity and damping torques, body poses, potential energy.

Usage:
  ros2 run transmission_bridge kinematics --ros-args -p model_file:=FILE
  ros2 launch transmission_bridge kinematics.launch.py model_file:=FILE [tip_links:=[BODY]]

Topics: joint_states in; ~/gravity_torques (effort = torque that holds the pose, -tau_g),
~/passive_torques (-tau_g + b v), ~/body_poses, ~/<tip>/pose, ~/potential_energy, /tf
(movable joints), /tf_static (fixed joints) and robot_description (given a URDF) out;
~/trajectory_in -> ~/trajectory_out (efforts filled with the feed-forward).
Start-up parameters: model_file (YAML or URDF) or robot_description (URDF text) or
use_robot_description_topic:=true; base_frame, tip_links, frame_prefix, diagnostics_period,
input_time_share, drop_on_overload, fast_path, transmissions_file (motors' rotor inertia and
friction for the inverse dynamics; a URDF model's own transmissions otherwise). Settable at
runtime: feed_forward (gravity or inverse_dynamics), stale_timeout (a joint
reported once and then not for this long stops the torques), gravity,
joints.<joint>.damping, joints.<joint>.default_position, joints.<joint>.default_translation
(screw joints only), payload.body, payload.mass, payload.com (one payload: set them
together), publish_every.<output> (gravity_torques, passive_torques, body_poses, tip_poses,
potential_energy, tf: 1 every message, N every Nth, 0 off), publish_frequency (/tf at most
this often by the joint_states stamps, Hz; 20 as robot_state_publisher; 0 no cap) ('ros2
param describe' gives units and ranges).
Services (std_srvs/Trigger): ~/set_default_pose_from_current, ~/reset_default_pose,
~/reset_damping, ~/go_to_default_pose.
"""

SETTINGS = settings_by_name([
    Setting(BASE_FRAME, 'world', str,
            "frame_id of the outputs: 'world', the URDF's root link (the same frame) or a body "
            'of the model', read_only=True),
    Setting(TIP_LINKS, [], 'string_array', 'bodies whose pose is also published on '
            '~/<body>/pose', read_only=True),
    Setting(FRAME_PREFIX, '', str, 'put before every frame id of /tf and /tf_static, as '
            "robot_state_publisher's frame_prefix (e.g. 'robot1/')", read_only=True),
    Setting(STALE_TIMEOUT, 0.5, float,
            'a joint reported once and then not for this long is stale, s: torques, poses and '
            'energy stop, /tf goes on for the other joints', constraints='> 0',
            check=finite_positive(STALE_TIMEOUT)),
    Setting(FEED_FORWARD, 'gravity', str,
            "the efforts of ~/trajectory_out: 'gravity' (hold each point, -tau_g + b v) or "
            "'inverse_dynamics' (M a + C v - tau_g + b v, with the motors' rotors and friction "
            'when transmissions are known)', constraints=' or '.join(FEED_FORWARDS),
            check=one_of(FEED_FORWARD, FEED_FORWARDS)),
    Setting(TRANSMISSIONS_FILE, '', str,
            "transmissions YAML or URDF whose actuators' rotor_inertia and friction the inverse "
            "dynamics include ('': those of a URDF model, if it gives any)", read_only=True),
    *(Setting(f'{PUBLISH_EVERY}.{output}', 1, int,
              f'publish ~/{output} for every Nth input message (1: every message, 0: never)',
              constraints='>= 0', check=whole_non_negative(f'{PUBLISH_EVERY}.{output}'))
      for output in OUTPUTS),
    Setting(PUBLISH_FREQUENCY, 20.0, float,
            "/tf at most this often, Hz, as robot_state_publisher's publish_frequency (its "
            'default 20), counted in the joint_states stamps; the other outputs and /tf_static '
            'are not capped; 0: no cap (then publish_every.tf alone decides)',
            constraints='>= 0', check=finite_non_negative(PUBLISH_FREQUENCY, 'frequency')),
])
