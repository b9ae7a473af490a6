"""
The robot MuJoCo integrates: the user's MJCF or URDF, a floating base and a ground if asked.

No ROS here. :func:`load` compiles the file with MuJoCo (its own URDF importer for ``.urdf``),
frees the root body (``floating_base``) and adds a ground plane where the model has none,
and reads the model's keyframe ``home`` by joint name. :func:`close_chains` puts the joints
no one commands (cranks, rods, rotors) where the model's equality constraints want them for
given commanded joints: Gauss-Newton on MuJoCo's own constraint residuals and Jacobian, so
a pose set by hand (a default position, a reset) starts with every chain closed.
"""

import math
import os
import pathlib
import sys
import xml.etree.ElementTree as ElementTree

import numpy as np

from .urdf_repair import repair_inertials
from .._shared import urdf_xml
from ..transmissions import ConfigError

PIP = 'pip install mujoco'
# A chain is closed when every equality's residual is below this (m, or rad for a joint
# equality); Gauss-Newton gets there in a few steps from any nearby pose.
CLOSED = 1e-12
MAX_ROUNDS = 50
CHOLESKY_FLOOR = 1e-15      # the smallest pivot of J M⁻¹ Jᵀ's factor (chains independent)
# A model's and a transmission's damping of one joint agree within this relative difference
# (a value written twice, in a URDF and in a YAML, rounds differently; more is a second value).
DAMPING_RTOL = 1e-6


class SimulationError(ConfigError):
    """A model or a setting the simulator cannot run (one line, naming the key)."""


def import_mujoco():
    """Return the ``mujoco`` module, or raise naming the pip command that installs it."""
    try:
        import mujoco
    except ImportError:
        raise SimulationError("engine 'mujoco' needs MuJoCo, which is not installed: "
                              f'{PIP}') from None
    return mujoco


def joint_damping(names, model_damping, set_damping):
    """
    Return ``(damping, added, warnings)``: both engines' one rule for the joints' damping.

    ``names``, ``model_damping``, ``set_damping``: the transmissions' joints, the model's
    damping of each and the transmissions' (``damping``, what the bridge adds back to its
    commands). A joint the model leaves undamped takes the transmissions'; where both give
    one and they differ, the model's is the robot's, and a warning names the joint and both
    values (the bridge's commands then carry a damping the simulated joint does not have).
    """
    model_damping = np.asarray(model_damping, dtype=float)
    set_damping = np.asarray(set_damping, dtype=float)
    bare = (model_damping == 0) & (set_damping > 0)
    damping = np.where(bare, set_damping, model_damping)
    differ = ((model_damping > 0) & (set_damping > 0)
              & ~np.isclose(model_damping, set_damping, rtol=DAMPING_RTOL, atol=0.0))
    warnings = [f"joint {n!r}: the model's damping {m:g} differs from its transmission's "
                f'damping {b:g} (what the bridge adds back to its commands); the simulator '
                "applies the model's" for n, m, b, d in zip(names, model_damping, set_damping,
                                                            differ) if d]
    return damping, [n for n, b in zip(names, bare) if b], warnings


class Robot:
    """
    A compiled MuJoCo model and what the simulator reads of it.

    ``model``, ``data``; ``home``: joint name to qpos values (the keyframe ``home``, else
    empty); ``root``: the root body's name; ``floating``: whether the root is free; ``joints``:
    the hinge and slide joints in model order (names); ``free_qpos``: the free joint's qpos
    address (or None).
    """

    def __init__(self, model, home, floating, spec=None):
        mujoco = import_mujoco()
        self.model, self.data, self.spec = model, mujoco.MjData(model), spec
        self.home, self.floating = home, floating
        self.warnings = []
        self.fixed_joints = set()        # a URDF's fixed joints (MuJoCo welds them)
        self.urdf = False                # read from a URDF (its root's height means nothing)
        kinds = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
        self.joint_ids = [j for j in range(model.njnt) if model.jnt_type[j] in kinds]
        self.joints = [model.joint(j).name for j in self.joint_ids]
        self.qpos_of = {model.joint(j).name: int(model.jnt_qposadr[j]) for j in self.joint_ids}
        self.dof_of = {model.joint(j).name: int(model.jnt_dofadr[j]) for j in self.joint_ids}
        self.kind_of = {model.joint(j).name: int(model.jnt_type[j]) for j in range(model.njnt)}
        free = [j for j in range(model.njnt)
                if model.jnt_type[j] == int(mujoco.mjtJoint.mjJNT_FREE)]
        self.free_qpos = int(model.jnt_qposadr[free[0]]) if free else None
        self.free_dof = int(model.jnt_dofadr[free[0]]) if free else None
        body = int(model.jnt_bodyid[free[0]]) if free else (1 if model.nbody > 1 else 0)
        self.root = model.body(body).name or 'world'

    def with_tendons(self, tendons):
        """
        Return this robot compiled again with fixed tendons ``{name: [(joint, coef)]}``.

        A tendon's length is ``Σ coef q_joint``: a motor coordinate made of the joints', on
        which MuJoCo can put dry friction (``tendon_frictionloss``).
        """
        mujoco = import_mujoco()
        for name, joints in tendons.items():
            tendon = self.spec.add_tendon(name=name)
            for joint, coef in joints:
                tendon.wrap_joint(joint, float(coef))
        model = self.spec.compile()
        robot = Robot(model, self.home, self.floating, self.spec)
        robot.warnings, robot.fixed_joints = self.warnings, self.fixed_joints
        robot.tendon_of = {name: mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_TENDON, name)
                           for name in tendons}
        return robot


def _keyframe(mujoco, spec, path):
    """Return the keyframe ``home`` of ``spec`` as {joint: qpos values} (empty without one)."""
    if not any(k.name == 'home' for k in spec.keys):
        return {}
    model = _compile(mujoco, spec, path)
    key = model.key('home').id
    out = {}
    for j in range(model.njnt):
        start = model.jnt_qposadr[j]
        end = model.jnt_qposadr[j + 1] if j + 1 < model.njnt else model.nq
        out[model.joint(j).name] = np.array(model.key_qpos[key, start:end])
    return out


def _compile(mujoco, spec, path):
    try:
        return spec.compile()
    except ValueError as exc:       # MuJoCo's compiler: its own message
        raise SimulationError(f'model_file {path}: MuJoCo cannot compile it: '
                              f'{str(exc).strip()}') from None


MESHES = ('.stl', '.obj', '.msh')     # the mesh files MuJoCo reads


def _package_roots():
    """Return the folders ``package://NAME/...`` may live under (``share`` folders)."""
    roots = [pathlib.Path(p) / 'share' for p in os.environ.get(
        'AMENT_PREFIX_PATH', '').split(os.pathsep) if p]
    roots.append(pathlib.Path(sys.prefix) / 'share')
    roots.extend(pathlib.Path(p) / 'cmeel.prefix' / 'share' for p in sys.path if p)
    return roots


def _mesh_file(name, folder):
    if name.startswith('package://'):
        rest = name[len('package://'):]
        return next((r / rest for r in _package_roots() if (r / rest).is_file()), None)
    if name.startswith('file://'):
        name = name[len('file://'):]
    path = pathlib.Path(folder) / name
    return path if path.is_file() else None


def urdf_for_mujoco(text, folder, floating_base=False, meshes=True):
    """
    Return ``(text, warnings)``: a URDF MuJoCo's importer keeps whole.

    MuJoCo makes a URDF's root link its world body (its inertia lost) and fuses links on
    fixed joints; here the root hangs from a ``world`` link on a fixed joint (a ``floating``
    one with ``floating_base``) and nothing is fused, so every link is a body of its name.
    Visual elements are dropped (MuJoCo draws nothing here); a collision mesh MuJoCo cannot
    read (not found, or not STL/OBJ/MSH; every one without ``meshes``) is dropped with a
    warning naming the link. Inertials MuJoCo refuses become the nearest it takes
    (:mod:`.urdf_repair`), each said.
    """
    root = urdf_xml.parse(text, SimulationError)
    warnings = repair_inertials(root)
    for link in root.findall('link'):
        for visual in link.findall('visual'):
            link.remove(visual)
        for collision in link.findall('collision'):
            mesh = collision.find('geometry/mesh')
            if mesh is None:
                continue
            found = _mesh_file(mesh.get('filename', ''), folder)
            if not meshes:
                link.remove(collision)
            elif found is None or found.suffix.lower() not in MESHES:
                link.remove(collision)
                warnings.append(f'link {link.get("name")!r}: collision mesh '
                                f'{mesh.get("filename")!r} left out (MuJoCo reads only '
                                f'{"/".join(MESHES)} files it can find)')
            else:
                mesh.set('filename', str(found))
    children = {j.find('child').get('link') for j in root.findall('joint')}
    roots = [link.get('name') for link in root.findall('link')
             if link.get('name') not in children]
    if len(roots) == 1 and roots[0] != 'world':
        ElementTree.SubElement(root, 'link', name='world')
        joint = ElementTree.SubElement(root, 'joint', name=f'{roots[0]}_mount',
                                       type='floating' if floating_base else 'fixed')
        ElementTree.SubElement(joint, 'parent', link='world')
        ElementTree.SubElement(joint, 'child', link=roots[0])
    extension = root.find('mujoco')
    if extension is None:
        extension = ElementTree.SubElement(root, 'mujoco')
    compiler = extension.find('compiler')
    if compiler is None:
        compiler = ElementTree.SubElement(extension, 'compiler')
    compiler.set('fusestatic', 'false')
    compiler.set('discardvisual', 'true')
    compiler.set('strippath', 'false')
    return ElementTree.tostring(root, encoding='unicode'), warnings


def _read(mujoco, file, floating_base):
    """Return ``(spec, warnings, whether a URDF)`` of an MJCF or URDF file."""
    text = file.read_text()
    warnings = []
    try:        # the package's guarded parser, as for every XML it reads: no DOCTYPE
        root = urdf_xml.parse(text, ValueError)
    except ValueError as exc:
        raise SimulationError(f'model_file {file}: {exc}') from None
    try:
        if root.tag == 'robot':
            made, warnings = urdf_for_mujoco(text, file.parent, floating_base)
            spec = mujoco.MjSpec.from_string(made)
            try:
                spec.compile()
            except ValueError as exc:         # a mesh MuJoCo reads but cannot use
                if 'mesh' not in str(exc).lower() and 'stl' not in str(exc).lower():
                    raise
                made, warnings = urdf_for_mujoco(text, file.parent, floating_base, False)
                warnings.append(f'collision meshes left out: MuJoCo cannot use one of them '
                                f'({str(exc).strip().splitlines()[0]})')
                spec = mujoco.MjSpec.from_string(made)
            return spec, warnings, True
        return mujoco.MjSpec.from_file(str(file)), warnings, False
    except (ValueError, ElementTree.ParseError) as exc:
        raise SimulationError(f'model_file {file}: MuJoCo cannot read it: '
                              f'{str(exc).strip()}') from None


URDF_STEP = 0.0005     # s: the longest step a URDF (which names none) is integrated with


def load(path, floating_base=False, rate=None):
    """
    Compile ``path`` (an MJCF or a URDF) into a :class:`Robot` (module docstring).

    An MJCF keeps its own timestep; a URDF names none and gets the longest step of at most
    ``URDF_STEP`` that divides the state period of ``rate`` (states per second).
    """
    mujoco = import_mujoco()
    file = pathlib.Path(path)
    if not file.is_file():
        raise SimulationError(f'model_file {str(path)!r}: no such file')
    spec, warnings, urdf = _read(mujoco, file, floating_base)
    if rate and urdf:
        period = 1.0 / rate
        spec.option.timestep = period / math.ceil(period / URDF_STEP - 1e-9)
    home = _keyframe(mujoco, spec, path)
    floating = False
    if floating_base:
        root = spec.worldbody.first_body()
        if root is None:
            raise SimulationError(f'floating_base: model_file {path} has no body to free')
        has_free = any(j.type == mujoco.mjtJoint.mjJNT_FREE for j in root.joints)
        if not has_free:
            if root.joints:
                raise SimulationError(
                    f'floating_base: the root body {root.name!r} of {path} already has '
                    f'joints ({", ".join(j.name for j in root.joints)}): free a body '
                    'without joints')
            root.add_freejoint(name=f'{root.name}_floating_base')
            for key in list(spec.keys):     # sized for the model without the free joint
                spec.delete(key)
        if not any(g.type == mujoco.mjtGeom.mjGEOM_PLANE for g in spec.geoms):
            spec.worldbody.add_geom(name='ground', type=mujoco.mjtGeom.mjGEOM_PLANE,
                                    size=[0, 0, 1], friction=[1.0, 0.005, 0.0001])
        floating = True
    model = _compile(mujoco, spec, path)
    robot = Robot(model, home, floating, spec)
    robot.warnings = warnings
    robot.urdf = bool(urdf)
    if urdf:
        robot.fixed_joints = {j.get('name') for j in urdf_xml.parse(
            file.read_text(), SimulationError).findall('joint') if j.get('type') == 'fixed'}
    if robot.free_qpos is not None:
        robot.floating = True
    return robot


def set_pose(robot, positions, base=None):
    """
    Put ``robot`` at rest in ``positions`` ({joint: qpos values}), chains closed.

    Joints not named keep the model's reference pose (``qpos0``) and, with the equality
    constraints, are then moved to close every chain (:func:`close_chains`). ``base`` is the
    free joint's 7 numbers (position, quaternion w x y z); default the root body's pose in the
    model. Returns the largest residual left.
    """
    mujoco = import_mujoco()
    model, data = robot.model, robot.data
    mujoco.mj_resetData(model, data)
    fixed = []
    for name, value in positions.items():
        j = model.joint(name).id
        start = model.jnt_qposadr[j]
        values = np.atleast_1d(value)
        data.qpos[start:start + len(values)] = values
        dof = model.jnt_dofadr[j]
        width = {0: 6, 1: 3}.get(int(model.jnt_type[j]), 1)
        fixed.extend(range(dof, dof + width))
    if robot.free_qpos is not None:
        a = robot.free_qpos
        data.qpos[a:a + 7] = base if base is not None else np.concatenate(
            [model.body_pos[1], model.body_quat[1]])
        fixed.extend(range(robot.free_dof, robot.free_dof + 6))
    free = np.setdiff1d(np.arange(model.nv), np.asarray(fixed, dtype=int))
    closed = close_chains(robot, free)
    mujoco.mj_fwdPosition(model, data)
    rows = data.efc_type[:data.nefc] == int(mujoco.mjtConstraint.mjCNSTR_EQUALITY)
    return max(closed if not rows.any() else 0.0, float(np.max(np.abs(
        data.efc_pos[:data.nefc][rows]), initial=0.0)))


def close_chains(robot, free, rounds=MAX_ROUNDS, keep_velocity=False):
    """
    Move the degrees of freedom ``free`` (indices) until every equality holds.

    Gauss-Newton on the equality rows of MuJoCo's constraint residual ``efc_pos`` and
    Jacobian ``efc_J``, minimum-norm steps, ``mj_integratePos`` for the update, at most
    ``rounds`` steps (from a state MuJoCo just stepped, one step takes a residual of 1e-5 to
    about 1e-10). Velocities are then set to rest, or with ``keep_velocity`` projected onto
    the chains' motions (the same degrees of freedom take up ``J v``). Returns the largest
    residual before the last step (a chain the free joints cannot close stays open; the
    caller says so).
    """
    mujoco = import_mujoco()
    model, data = robot.model, robot.data
    equality = int(mujoco.mjtConstraint.mjCNSTR_EQUALITY)
    residual, J = 0.0, None
    for _ in range(rounds):
        mujoco.mj_fwdPosition(model, data)
        rows = np.flatnonzero(data.efc_type[:data.nefc] == equality)
        if not len(rows) or not len(free):
            return 0.0
        r = data.efc_pos[rows]
        residual = float(np.max(np.abs(r)))
        J = _efc_jacobian(model, data)[rows]
        if residual < CLOSED:
            break
        step = np.zeros(model.nv)
        step[free] = -_minimum_norm(J[:, free], r)
        mujoco.mj_integratePos(model, data.qpos, step, 1.0)
    if keep_velocity:
        data.qvel[free] -= _minimum_norm(J[:, free], J @ data.qvel)
    else:
        data.qvel[:] = 0.0
        mujoco.mj_forward(model, data)
    return residual


class ChainCloser:
    """
    Close the chains MuJoCo's soft equalities left open, as a rigid mechanism would be.

    The simulator calls it after each state period.

    The smallest change in the metric of the mass matrix (the one an impulse makes):
    ``Δq = −M⁻¹Jᵀ (J M⁻¹ Jᵀ)⁻¹ r`` for the equality residuals ``r`` (one Gauss-Newton step),
    then the velocities the same way with the Jacobian at the closed pose, so ``J v = 0``.
    The equality rows are MuJoCo's first ``data.ne`` constraint rows; the model's Jacobian is
    set dense, so they are read in place.
    """

    def __init__(self, robot):
        mujoco = import_mujoco()
        self.mujoco, self.robot = mujoco, robot
        robot.model.opt.jacobian = int(mujoco.mjtJacobian.mjJAC_DENSE)   # same dynamics
        self._residual = None

    def __call__(self, held=None):
        """
        Close the chains a step opened; keep the motion along them.

        ``held``: degrees of freedom that do not move (a stuck gear stage's motor: its dry
        friction takes the impulse), or None.
        """
        mujoco, model, data = self.mujoco, self.robot.model, self.robot.data
        mujoco.mj_fwdPosition(model, data)
        ne, nv = data.ne, model.nv
        if not ne:
            return
        J = data.efc_J[:ne * nv].reshape(ne, nv)
        self._residual = data.efc_pos[:ne].copy()
        MinvJT = np.empty((ne, nv))
        mujoco.mj_solveM(model, data, MinvJT, J)
        if held is not None:
            MinvJT[:, held] = 0.0
        # One Cholesky factor of J M⁻¹ Jᵀ serves the velocities too: it barely moves with a
        # step of ~1e-5; J itself is taken anew at the closed pose (J v must vanish there).
        # MuJoCo's own small dense Cholesky: numpy's LAPACK call costs 5-10x more at 20x20.
        A = J @ MinvJT.T
        mujoco.mju_cholFactor(A, CHOLESKY_FLOOR)
        x = np.empty(ne)
        mujoco.mju_cholSolve(x, A, self._residual)
        mujoco.mj_integratePos(model, data.qpos, MinvJT.T @ -x, 1.0)
        mujoco.mj_kinematics(model, data)
        mujoco.mj_comPos(model, data)
        mujoco.mj_makeConstraint(model, data)
        J = data.efc_J[:ne * nv].reshape(ne, nv)
        mujoco.mju_cholSolve(x, A, J @ data.qvel)
        data.qvel[:] -= MinvJT.T @ x

    @property
    def residual(self):
        """Return the largest equality residual the last call closed (m or rad)."""
        return 0.0 if self._residual is None else float(np.abs(self._residual).max())


def _minimum_norm(A, b):
    """Return the least-norm x with A x = b (columns of b too; A of full row rank)."""
    try:
        return A.T @ np.linalg.solve(A @ A.T, b)
    except np.linalg.LinAlgError:        # dependent rows (a redundant chain): least squares
        return np.linalg.lstsq(A, b, rcond=None)[0]


def _efc_jacobian(model, data):
    """Return the dense constraint Jacobian (nefc x nv), whichever storage MuJoCo used."""
    mujoco = import_mujoco()
    if mujoco.mj_isSparse(model):
        dense = np.zeros((data.nefc, model.nv))
        mujoco.mju_sparse2dense(dense, data.efc_J, data.efc_J_rownnz, data.efc_J_rowadr,
                                data.efc_J_colind)
        return dense
    return np.asarray(data.efc_J[:data.nefc * model.nv]).reshape(data.nefc, model.nv)
