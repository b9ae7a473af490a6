"""
Write config/legged_robot.xml: the legged robot's MJCF, its linkages as MuJoCo closed chains.

MuJoCo imports config/legged_robot.urdf (links, joints, limits, damping); this script then
adds what the URDF leaves to the transmissions: per knee a rotor (hinge ``*_knee_motor``,
the motor itself) geared 9:1 to a crank by a joint equality, per ankle two cranks (hinges
``*_ankle_upper_motor``, ``*_ankle_lower_motor``: the motors, reduction 1), and per crank a
rod on a ball joint whose free end a ``connect`` equality pins to the shank or the foot.
The cranks' axes and points, the rods' ends and the reductions are read from the URDF's
``LinkageTransmission`` elements (all in the parent link of the linkage's first joint, at the
zero pose); MuJoCo solves the chains. Feet are boxes that touch the ground; the keyframe
``home`` stands the robot with its soles on z = 0 (``floating_base:=true`` frees the pelvis).

``python3 examples/make_legged_mjcf.py [OUT]``; test_mujoco_engine.py checks the committed
file is what this writes.
"""

import pathlib
import sys
import xml.etree.ElementTree as ElementTree

import mujoco
import numpy as np

CONFIG = pathlib.Path(__file__).resolve().parent.parent / 'config'
URDF = CONFIG / 'legged_robot.urdf'
# The pose the robot stands in (rad): knees bent, soles flat (ankle = -(hip + knee)).
STAND = {'hip_pitch': -0.3, 'knee': 0.6, 'ankle_pitch': -0.3}
FOOT = {'half': [0.1, 0.045, 0.015], 'centre': [0.025, 0.0, -0.045]}   # box in the foot, m
# Equalities about as stiff as a 1 ms step allows (MuJoCo's soft constraints): the chains
# stay closed to ~1e-9 m under the robot's weight.
SOLREF, SOLIMP = [0.002, 1.0], [0.9999, 0.9999, 0.001, 0.5, 2.0]
ROD_MASS, CRANK_MASS, ROTOR_MASS = 0.05, 0.05, 0.1     # kg
URDF_JOINTS = []                                       # the URDF's joints (build fills it)
CRANK_ARMATURE = 5e-3     # kg m^2: a motor with its own 1:25 gearbox driving a crank
ROTOR_INERTIA = 5e-5                                   # kg m^2 about the rotor's axis


def _xyz(element, tag):
    return np.array([float(x) for x in element.find(tag).get('xyz').split()])


def _linkages(urdf_text):
    """Yield (linkage joints, [(motor, axis, origin, crank, attachment, reduction)])."""
    root = ElementTree.fromstring(urdf_text)
    for t in root.iter('transmission'):
        if not t.findtext('plugin', '').endswith('LinkageTransmission'):
            continue
        joints = [j.get('name') for j in t.findall('joint')]
        motors = [(a.get('name'), _xyz(a, 'axis'), _xyz(a, 'origin'), _xyz(a, 'crank'),
                   _xyz(a, 'attachment'), float(a.findtext('mechanical_reduction', '1')))
                  for a in t.findall('actuator')]
        yield joints, motors


def _inertial(body, mass, com, inertia):
    body.mass, body.ipos, body.inertia = mass, com, [inertia] * 3
    body.explicitinertial = True


def _no_contact(geom):
    geom.contype, geom.conaffinity = 0, 0


def _rod(spec, crank, name, start, end, output, reference):
    """Hang a rod on ``crank`` at ``start`` and pin its end to ``output`` at ``end``."""
    rod = crank.add_body(name=f'{name}_rod', pos=start)
    rod.add_joint(name=f'{name}_rod', type=mujoco.mjtJoint.mjJNT_BALL, damping=1e-4,
                  armature=1e-6)
    _inertial(rod, ROD_MASS, (end - start) / 2, 1e-5)
    g = rod.add_geom(type=mujoco.mjtGeom.mjGEOM_CAPSULE, size=[0.006, 0, 0],
                     fromto=[0, 0, 0, *(end - start)], rgba=[0.6, 0.6, 0.65, 1])
    _no_contact(g)
    rod.add_site(name=f'{name}_rod_end', pos=end - start)
    output.add_site(name=f'{name}_attachment', pos=end + start_of(crank) - reference)
    spec.add_equality(type=mujoco.mjtEq.mjEQ_CONNECT, name=f'{name}_rod',
                      objtype=mujoco.mjtObj.mjOBJ_SITE, name1=f'{name}_rod_end',
                      name2=f'{name}_attachment', solref=SOLREF, solimp=SOLIMP)


def _origin_in(body, frame):
    """Return ``body``'s origin in ``frame`` at the zero pose (the URDF's links: no rotation)."""
    out = np.zeros(3)
    while body.name != frame.name:
        assert np.allclose(body.quat, [1, 0, 0, 0]), body.name
        out, body = out + body.pos, body.parent
    return out


def start_of(body):
    """Return ``body``'s position in its parent."""
    return np.array(body.pos)


def build():
    """Return the MJCF text."""
    from transmission_bridge.simulation.model import urdf_for_mujoco
    text = URDF.read_text()
    spec = mujoco.MjSpec.from_string(urdf_for_mujoco(text, CONFIG)[0])
    spec.compiler.discardvisual = False
    URDF_JOINTS[:] = [j.name for j in spec.joints if j.name != 'pelvis_mount']
    spec.modelname = 'legged_robot'
    spec.option.timestep = 0.001
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    spec.option.tolerance, spec.option.iterations = 1e-10, 50
    spec.compiler.degree = False
    for geom_body in [b for b in spec.bodies if b.name]:
        if geom_body.name.endswith('_foot'):
            g = geom_body.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=FOOT['half'],
                                   pos=FOOT['centre'], friction=[1.0, 0.02, 0.001],
                                   rgba=[0.3, 0.3, 0.35, 1])
            g.name = f'{geom_body.name}_sole'
        elif geom_body.name.endswith(('_thigh', '_shank')):
            _no_contact(geom_body.add_geom(type=mujoco.mjtGeom.mjGEOM_CAPSULE,
                                           size=[0.03, 0, 0], fromto=[0, 0, 0, 0, 0, -0.4],
                                           rgba=[0.7, 0.7, 0.75, 1]))
        elif geom_body.name == 'pelvis':
            _no_contact(geom_body.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX,
                                           size=[0.08, 0.15, 0.05], rgba=[0.5, 0.5, 0.6, 1]))
    for joints, motors in _linkages(text):
        frame = spec.joint(joints[0]).parent.parent          # the first joint's parent link
        output = spec.joint(joints[-1]).parent
        reference = _origin_in(output, frame)              # the output's origin, zero pose
        for motor, axis, origin, crank_end, attachment, reduction in motors:
            stem = motor[:-len('_motor')]
            crank = frame.add_body(name=f'{stem}_crank', pos=origin)
            _inertial(crank, CRANK_MASS, (crank_end - origin) / 2, 1e-5)
            _no_contact(crank.add_geom(type=mujoco.mjtGeom.mjGEOM_CAPSULE, size=[0.008, 0, 0],
                                       fromto=[0, 0, 0, *(crank_end - origin)],
                                       rgba=[0.8, 0.4, 0.2, 1]))
            if reduction == 1.0:     # a geared motor turning the crank: its rotor reflected
                crank.add_joint(name=motor, axis=axis, armature=CRANK_ARMATURE)
            else:   # a rotor on the crank's axis, geared to it: the motor is the rotor
                crank.add_joint(name=f'{stem}_crank', axis=axis)
                rotor = frame.add_body(name=f'{stem}_rotor', pos=origin)
                rotor.add_joint(name=motor, axis=axis)
                _inertial(rotor, ROTOR_MASS, [0, 0, 0], ROTOR_INERTIA)
                spec.add_equality(type=mujoco.mjtEq.mjEQ_JOINT, name=f'{stem}_gear',
                                  name1=f'{stem}_crank', name2=motor,
                                  data=[0, 1.0 / reduction] + [0] * 10, solref=SOLREF,
                                  solimp=SOLIMP)
            _rod(spec, crank, stem, crank_end - origin, attachment - origin, output,
                 reference)
    home = _home(spec)
    return _exact(spec.to_xml(), home)


def _exact(xml, home):
    """Return ``xml`` with the gears' ratios and the keyframe in full precision."""
    # MuJoCo writes 6 significant digits; a ratio of 1/9 so written would open the gear by
    # 5e-6 rad per rad of the crank.
    root = ElementTree.fromstring(xml)
    for gear in root.iter('joint'):
        if gear.get('polycoef'):
            ratio = float(gear.get('polycoef').split()[1])
            exact = 1.0 / round(1.0 / ratio)
            gear.set('polycoef', f'0 {exact!r} 0 0 0')
    root.find('keyframe/key').set('qpos', ' '.join(repr(float(x)) for x in home))
    ElementTree.indent(root, space='  ')
    return ElementTree.tostring(root, encoding='unicode') + '\n'


def _home(spec):
    """Add the keyframe ``home``: standing, soles on z = 0 (a floating pelvis)."""
    from transmission_bridge.simulation.model import Robot, set_pose
    robot = Robot(spec.compile(), {}, False)
    stand = {j: next((v for k, v in STAND.items() if j.endswith(k)), 0.0)
             for j in URDF_JOINTS}
    left = set_pose(robot, stand)
    assert left < 1e-12, left
    sole = min(robot.data.geom(f'{side}_foot_sole').xpos[2] - FOOT['half'][2]
               for side in ('left', 'right'))
    spec.body('pelvis').pos = [0.0, 0.0, spec.body('pelvis').pos[2] - sole + 0.0005]
    spec.add_key(name='home', qpos=[float(x) for x in robot.data.qpos])
    return np.array(robot.data.qpos)


def main(argv=None):
    """Write the MJCF (to the path given, or config/legged_robot.xml)."""
    argv = sys.argv[1:] if argv is None else argv
    out = pathlib.Path(argv[0]) if argv else CONFIG / 'legged_robot.xml'
    out.write_text(build())
    print(f'wrote {out}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
