"""
The inverse dynamics as a linear map of the bodies' inertial parameters: ``tau = Y(q, v, a) pi``.

Per body, ten parameters in its own frame, in Pinocchio's order (``Inertia.toDynamicParameters``)::

    pi_B = (m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz)

``c`` the centre of mass and ``I`` the rotational inertia about the body's origin, both in
the body's frame (``I = I_c + m (|c|² E - c c^T)``). Stacked in body order, ``Y pi`` is
:meth:`~.model.Model.inverse_dynamics` without transmissions (Pinocchio's ``rnea``).

Each body's wrench at its origin, in its frame, from its velocity ``[w; v]`` and its
acceleration ``[al; a]`` (spatial, at its origin, in its frame; gravity as an upward
acceleration of the world, as :mod:`.newton_euler`)::

    n = I al + h x a + w x (I w + h x v) + v x (w x h)
    f = m (a + w x v) + al x h + w x (w x h)

linear in ``(m, h = m c, I)``: the columns of ``m`` are ``[0; a + w x v]``, those of ``h``
``[(v x w - a) x ; (al x) + (w x)(w x)]`` and those of ``I`` ``[L(al) + (w x) L(w); 0]``
(``I x = L(x) (I_xx, I_xy, I_yy, I_xz, I_yz, I_zz)``). A coordinate's torque is the sum,
over the bodies at or below its joint, of its motion (expressed in each body's frame) dotted
with that body's wrench; mimic coordinates fold onto their independent joints.
"""

import os

import numpy as np

from .inertial import inertia_problem, Inertial
from .newton_euler import _cross, BodyFrames

PER_BODY = 10
NAMES = ('m', 'mx', 'my', 'mz', 'Ixx', 'Ixy', 'Iyy', 'Ixz', 'Iyz', 'Izz')
CHUNK = 512                 # samples a pass: the temporaries stay in the allocator's heap
_SYM = ((0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2))      # (I_xx, I_xy, I_yy, ...) entries


def labels(bodies):
    """Return the name of each entry of ``pi``: ``m(body)``, ``mx(body)``, ..., ``Izz(body)``."""
    return [f'{p}({b})' for b in bodies for p in NAMES]


def body_parameters(model, bodies=None):
    """Return ``pi`` of ``bodies`` (default every body): ten per body, the module's order."""
    names = model.body_names if bodies is None else list(bodies)
    return np.concatenate([_parameters_of(model.body(n).inertial) for n in names]
                          ) if names else np.zeros(0)


def physical_problem(pi_body):
    """Return why ten parameters are not a physical body, or '' (mass > 0 and a real inertia)."""
    m = float(pi_body[0])
    if not m > 0:
        return f'mass {m:.4g} kg is not positive'
    return inertia_problem(_split(pi_body)[2])


def _split(pi_body):
    """Return ``(m, c, I_c)`` of ten parameters (mass > 0)."""
    pi_body = np.asarray(pi_body, dtype=float)
    m = float(pi_body[0])
    c = pi_body[1:4] / m
    about_origin = np.empty((3, 3))
    for k, (i, j) in enumerate(_SYM):
        about_origin[i, j] = about_origin[j, i] = pi_body[4 + k]
    return m, c, about_origin - m * (c @ c * np.eye(3) - np.outer(c, c))


def regressor(model, q, v, a, bodies=None, kernels=None, out=None):
    """
    Return ``Y`` (N, nq, 10 * len(bodies)): ``Y @ pi`` is the inverse dynamics at (q, v, a).

    ``q``, ``v``, ``a`` (N, nq) or (nq,) in ``model.joint_names`` order; ``bodies`` default
    every body (the columns of bodies not listed are left out: their parameters held).
    ``kernels``: 'numpy' (the reference) or 'numba' (the body loop compiled,
    :mod:`.kernels.regressor`); default numba where it imports, as the model's backend.
    ``out``: an array of the result's shape to write into and return (a loop over batches
    that reuses it skips the zeroing of fresh pages).
    """
    from .numpy_backend import NumpyBackend
    from .backend import KERNELS_ENV
    from . import kernels as compiled
    if kernels is None:
        kernels = 'numba' if compiled.AVAILABLE and os.environ.get(
            KERNELS_ENV, '').strip().lower() != 'numpy' else 'numpy'
    q, v, a = (np.atleast_2d(np.asarray(x, dtype=float)) for x in (q, v, a))
    backend = getattr(model, '_regressor_backend', None)
    if backend is None:
        backend = model._regressor_backend = NumpyBackend(model._tree)
    tree = backend.tree
    names = list(model.body_names)
    chosen = names if bodies is None else list(bodies)
    index = [names.index(b) for b in chosen]
    shape = (len(q), model.num_positions, PER_BODY * len(chosen))
    if out is None or out.shape != shape:
        out = np.empty(shape)
    for start in range(0, len(q), CHUNK):
        part = slice(start, start + CHUNK)
        _chunk(tree, backend.frames_batch(q[part]), v[part], a[part], index,
               kernels == 'numba', out[part])
    return out


def _chunk(tree, XT_WB, v, a, index, compiled, out):
    """Write the regressor of one chunk into ``out`` (see :func:`regressor`)."""
    nb, n = tree.nb, v.shape[0]
    frames = BodyFrames(tree, XT_WB, mass_properties=False)
    tau_c = out if tree.fold is None else np.empty((n, tree.nc, PER_BODY * len(index)))
    if compiled:
        from .kernels.regressor import body_columns

        def moved(x):                               # sample-major, for the loop
            return np.ascontiguousarray(np.moveaxis(x, -1, 0))
        body_columns(moved(frames.S), moved(XT_WB), np.ascontiguousarray(v),
                     np.ascontiguousarray(a), np.asarray(tree.gravity, dtype=float),
                     np.asarray(tree.parent, dtype=np.intp),
                     np.asarray(tree.coord, dtype=np.intp),
                     np.asarray(tree.qidx, dtype=np.intp),
                     np.asarray(tree.qmul, dtype=float), np.asarray(index, dtype=np.intp),
                     tree.on_path, np.asarray(tree.joint_body, dtype=np.intp), tau_c)
    else:
        par = [pp if pp >= 0 else nb for pp in tree.parent]
        V = np.zeros((nb + 1, 6, n))
        A = np.zeros((nb + 1, 6, n))
        A[nb, 3:] = -np.asarray(tree.gravity)[:, None]
        for i in range(nb):                         # world velocities, as newton_euler
            V[i], A[i] = V[par[i]], A[par[i]]
            if tree.coord[i] >= 0:
                k, mul = tree.qidx[i], tree.qmul[i]
                Sv = frames.S[i] * (mul * v[:, k])
                V[i] += Sv
                A[i] += frames.S[i] * (mul * a[:, k])
                A[i, :3] += _cross(V[i, :3], Sv[:3])
                A[i, 3:] += _cross(V[i, :3], Sv[3:]) + _cross(V[i, 3:], Sv[:3])
        _body_loop(tree, frames, XT_WB, V, A, index, tau_c)
    if tree.fold is not None:
        np.matmul(tree.fold, tau_c, out=out)


def _body_loop(tree, frames, XT_WB, V, A, index, tau_c):
    """Write each body's columns (the numpy reference)."""
    tau_c[:] = 0.0
    for col, i in enumerate(index):
        R, p = XT_WB[i, :3], XT_WB[i, 3]            # R[j, r] = R_WB[r, j]
        w, vb = _to_body(R, p, V[i])
        al, ab = _to_body(R, p, A[i])
        Yb = _body_regressor(w, vb, al, ab)         # (6, 10, n): the wrench, body frame
        force = np.einsum('jrn,jpn->rpn', R, Yb[3:])          # to the world: R f
        moment = np.einsum('jrn,jpn->rpn', R, Yb[:3])         # R n + p x R f
        moment += _cross(p[:, None, :], force)
        above = np.flatnonzero(tree.on_path[i])
        S = frames.S[tree.joint_body[above]]                  # (k, 6, n), world
        tau_c[:, above, PER_BODY * col:PER_BODY * (col + 1)] = (
            np.einsum('ckn,kpn->ncp', S[:, :3], moment)
            + np.einsum('ckn,kpn->ncp', S[:, 3:], force))


def _to_body(R, p, motion):
    """Return a world motion ``[w; v]`` (at W's origin) at the body's origin, in its frame."""
    w, v = motion[:3], motion[3:]
    return (np.einsum('jrn,rn->jn', R, w),
            np.einsum('jrn,rn->jn', R, v + _cross(w, p)))


def _skew_columns(x):
    """Return ``[x]x`` as (3, 3, n): ``[x]x e_k`` in column k."""
    z = np.zeros_like(x[0])
    return np.array([[z, -x[2], x[1]], [x[2], z, -x[0]], [-x[1], x[0], z]])


def _L(x):
    """Return ``L(x)`` (3, 6, n): ``I x = L(x) (I_xx, I_xy, I_yy, I_xz, I_yz, I_zz)``."""
    z = np.zeros_like(x[0])
    return np.array([[x[0], x[1], z, x[2], z, z],
                     [z, x[0], x[1], z, x[2], z],
                     [z, z, z, x[0], x[1], x[2]]])


def _body_regressor(w, v, al, a):
    """Return the (6, 10, n) map from a body's ten parameters to its wrench (module doc)."""
    n = w.shape[1]
    Y = np.zeros((6, PER_BODY, n))
    Y[3:, 0] = a + _cross(w, v)
    Y[:3, 1:4] = _skew_columns(_cross(v, w) - a)
    Wx = _skew_columns(w)
    Y[3:, 1:4] = _skew_columns(al) + np.einsum('rsn,stn->rtn', Wx, Wx)
    Y[:3, 4:] = _L(al) + np.einsum('rsn,stn->rtn', Wx, _L(w))
    return Y


def moving_bodies(model):
    """
    Return ``{body: [body and the bodies fixed to it]}`` for each body a movable joint moves.

    What the data can tell apart: bodies welded together by fixed joints move as one (as
    Pinocchio merges them), and bodies fixed to the world move no torque at all.
    """
    names = list(model.body_names)
    groups = {}
    for name in names:
        owner = name
        while model.body(owner).joint.type_name == 'fixed' and model.body(owner).parent in names:
            owner = model.body(owner).parent
        if model.body(owner).joint.type_name != 'fixed':
            groups.setdefault(owner, []).append(name)
    return groups


def merged_parameters(model, groups=None):
    """
    Return ``pi`` of each moving body with the bodies fixed to it (:func:`moving_bodies`).

    Each fixed body's mass properties taken into its mover's frame and added: the ten
    parameters are linear in the mass distribution.
    """
    groups = moving_bodies(model) if groups is None else groups
    q0 = np.zeros(model.num_positions)
    poses = model.forward_kinematics(q0)
    out = []
    for owner, members in groups.items():
        total = np.zeros(PER_BODY)
        X_inv = np.linalg.inv(poses[owner])
        for name in members:
            inertial = model.body(name).inertial
            X = X_inv @ poses[name]
            R, p = X[:3, :3], X[:3, 3]
            c = p + R @ np.asarray(inertial.com, dtype=float)
            moved = Inertial.from_matrix(inertial.mass, c, R @ inertial.inertia @ R.T,
                                         physical=False)
            total += _parameters_of(moved)
        out.append(total)
    return np.concatenate(out) if out else np.zeros(0)


def _parameters_of(inertial):
    """Return the ten parameters of one :class:`.inertial.Inertial`."""
    m, c = inertial.mass, np.asarray(inertial.com, dtype=float)
    about_origin = inertial.inertia + m * (c @ c * np.eye(3) - np.outer(c, c))
    return np.array([m, *(m * c), *(about_origin[i, j] for i, j in _SYM)])


def fixed_shares(model, groups=None):
    """
    Return the ten parameters of the links fixed to each moving body: (len(groups), 10).

    Per body of :func:`merged_parameters`: the merged body less its own link's.
    """
    groups = moving_bodies(model) if groups is None else groups
    merged = merged_parameters(model, groups).reshape(len(groups), PER_BODY)
    own = np.array([_parameters_of(model.body(owner).inertial) for owner in groups])
    return merged - own


def with_merged_parameters(model, pi, groups=None, rtol=1e-12):
    """
    Return ``(model, changes, notes)``: the bodies of ``pi`` (:func:`merged_parameters`) in.

    A moving body's change goes to its own link; the bodies fixed to it keep theirs.
    ``changes`` maps each changed link to ``(mass, com, inertia about the com)``, as
    :func:`.urdf.with_inertials` takes; a link whose own share would not be a physical
    body keeps the model's, named in ``notes``.
    """
    from .body import Body
    groups = moving_bodies(model) if groups is None else groups
    pi = np.asarray(pi, dtype=float).reshape(len(groups), PER_BODY)
    old = merged_parameters(model, groups).reshape(len(groups), PER_BODY)
    fixed = fixed_shares(model, groups)
    bodies = list(model.bodies)
    index = {b.name: i for i, b in enumerate(bodies)}
    changes, notes = {}, []
    for (owner, members), new, before, others in zip(groups.items(), pi, old, fixed):
        if np.allclose(new, before, rtol=rtol, atol=0.0):
            continue
        own = new - others
        problem = physical_problem(own)
        if problem:
            notes.append(f'link {owner!r}: its share of the identified body ({problem}) is '
                         "not physical once the links fixed to it are taken off; the model's "
                         'kept')
            continue
        m, c, inertia = _split(own)
        inertial = Inertial.from_matrix(m, c, inertia, owner=f'body {owner!r}')
        b = bodies[index[owner]]
        bodies[index[owner]] = Body(b.name, b.joint, inertial, b.parent)
        changes[owner] = (m, [float(x) for x in c], inertia)
    return (model._rebuilt(bodies) if changes else model), changes, notes


def pseudo_inertia(pi_body):
    """Return the 4x4 pseudo-inertia ``[[S, h], [h^T, m]]`` of ten parameters."""
    pi_body = np.asarray(pi_body, dtype=float)
    about_origin = np.empty((3, 3))
    for k, (i, j) in enumerate(_SYM):
        about_origin[i, j] = about_origin[j, i] = pi_body[4 + k]
    J = np.zeros((4, 4))
    J[:3, :3] = 0.5 * np.trace(about_origin) * np.eye(3) - about_origin
    J[:3, 3] = J[3, :3] = pi_body[1:4]
    J[3, 3] = pi_body[0]
    return J


def nearest_physical(pi_body, floor=1e-6):
    """
    Return ten parameters near ``pi_body`` that are a body with a density.

    The pseudo-inertia's eigenvalues below ``floor`` times the largest raised to it (the
    nearest positive definite matrix in the Frobenius norm, then a margin).
    """
    values, vectors = np.linalg.eigh(pseudo_inertia(pi_body))
    top = max(float(values.max()), 1e-12)
    J = (vectors * np.maximum(values, floor * top)) @ vectors.T
    S = J[:3, :3]
    about_origin = np.trace(S) * np.eye(3) - S
    return np.concatenate([[J[3, 3]], J[:3, 3], [about_origin[i, j] for i, j in _SYM]])
