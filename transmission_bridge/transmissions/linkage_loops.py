"""
The linkage transmission's loops: rods closing a serial chain, solved and differentiated.

Plain Python on numpy arrays and floats, compiled by numba where it imports, on the first
call of :func:`kernels` (a set that holds a linkage; importing this module loads no numba).
The same source run as Python is the reference; ``TRANSMISSION_BRIDGE_KERNELS=numpy`` runs
it so even where numba is installed. Formulas: :mod:`.linkage` and NOTATION.md. Written with
scalars and one scratch buffer per call, not small arrays: a compiled loop spends more on
allocating a 3-vector than on the arithmetic. Every function takes one linkage as flat
arrays (:class:`.linkage.LinkageGeometry` packs them):

* ``kinds`` (int): per joint 0 revolute, 1 prismatic; then per actuator 0 rotary, 1 slider,
  2 cylinder.
* ``geo`` (float): per joint ``J_WIDTH`` numbers (axis, point on it, offset, lower, upper),
  then per actuator ``A_WIDTH`` (axis or direction, origin, crank, attachment, rod length
  or zero-pose length, reduction, branch sign).

Geometry is in the linkage frame at the zero pose; ``q`` are the joints' geometric
coordinates (the published joint is ``q + offset``); ``u`` the actuators' crank angles
(rad) or travels (m), ``x_a = n u``.
"""

import math

import numpy as np

from .._shared import loops as _loops
from .._shared.loops import KERNELS_ENV  # noqa: F401 (the name this module's docstring gives)

# Columns of a joint's row of ``geo``, then of an actuator's.
J_AXIS, J_POINT, J_OFFSET, J_LOWER, J_UPPER, J_WIDTH = 0, 3, 6, 7, 8, 9
A_AXIS, A_ORIGIN, A_CRANK, A_ATTACH, A_LENGTH, A_REDUCTION, A_BRANCH, A_WIDTH = (
    0, 3, 6, 9, 12, 13, 14, 15)
ROTARY, SLIDER, CYLINDER = 0, 1, 2
REVOLUTE, PRISMATIC = 0, 1

RESIDUAL_TOL = 1e-12        # m: the rods' equations hold to this at a solution
MAX_ITERATIONS = 60
MAX_STEP = 0.25             # rad or m: the largest Newton step, so that it stays on its branch
MAX_CONDITION = 1e6         # the rods' Jacobian's 1-norm condition number, at the most
MIN_TRANSMISSION = 1e-6     # |cos| of the angle between rod and driver motion, at the least
FINE_STEP = 1e-8            # rad or m: after a Newton step this small the error is of its square
ROUNDING_TOL = 1e-15        # m: a residual at rounding level: the start was the solution

_NOT_COMPILED = ('kernels',)

# Status of a solve or a map (0: fine; -1: an input unknown).
OK, NOT_CONVERGED, SINGULAR, OUT_OF_LIMITS, UNREACHABLE = 0, 1, 2, 3, 4

# The loops are found or compiled by the first :func:`kernels` call: only a set that holds a
# linkage pays for them, never an import.
COMPILED = _loops.wanted()
_compiled = None


def kernels():
    """
    Return the loops to call: compiled ahead of time where they can be, else by numba.

    Ahead of time (:mod:`.._shared.ahead`): a module that imports no numba, built once; else a
    copy of this module whose every function is ``numba.njit`` (compiled on its first call,
    cached on disk beside this file); where numba does not import or :data:`KERNELS_ENV` says
    ``numpy``, the plain module: the reference, with the same results.
    """
    from .._shared import ahead
    return ahead.kernels(__name__, _NOT_COMPILED)


def scratch_size(n):
    """Return the size of the scratch buffer the loops need for a linkage of ``n`` joints."""
    return 8 * n * n + 3 * n * n * 2 + 24 * n + 16


def _rotation(wx, wy, wz, angle):
    """Return the rotation by ``angle`` about the unit axis ``w`` (Rodrigues), row-major."""
    s, c = math.sin(angle), math.cos(angle)
    v = 1.0 - c
    return (c + wx * wx * v, wx * wy * v - wz * s, wx * wz * v + wy * s,
            wy * wx * v + wz * s, c + wy * wy * v, wy * wz * v - wx * s,
            wz * wx * v - wy * s, wz * wy * v + wx * s, c + wz * wz * v)


def chain(q, n, kinds, geo, points, jacobians, twists):
    """
    Fill each actuator's attachment point (n, 3) and its Jacobian d p / d q (n, 3, n).

    The output body's pose is ``T(q) = exp(xi_1 q_1) ... exp(xi_n q_n)``; the attachment
    ``a_k`` moves to ``p_k = T(q) a_k``. ``twists`` (n, 6) receives each joint's axis and a
    point on it in the current configuration (``omega'_i, r'_i``: the chain before the joint
    applied to them); revolute ``d p / d q_i = omega'_i x (p - r'_i)``, prismatic
    ``omega'_i``.
    """
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0
    tx, ty, tz = 0.0, 0.0, 0.0
    for i in range(n):
        g = i * J_WIDTH
        ax, ay, az = geo[g], geo[g + 1], geo[g + 2]
        px, py, pz = geo[g + 3], geo[g + 4], geo[g + 5]
        wx = r00 * ax + r01 * ay + r02 * az
        wy = r10 * ax + r11 * ay + r12 * az
        wz = r20 * ax + r21 * ay + r22 * az
        ox = r00 * px + r01 * py + r02 * pz + tx
        oy = r10 * px + r11 * py + r12 * pz + ty
        oz = r20 * px + r21 * py + r22 * pz + tz
        twists[i, 0], twists[i, 1], twists[i, 2] = wx, wy, wz
        twists[i, 3], twists[i, 4], twists[i, 5] = ox, oy, oz
        if kinds[i] == REVOLUTE:
            # exp(xi q) about the world axis w through o: x -> E (x - o) + o.
            e00, e01, e02, e10, e11, e12, e20, e21, e22 = _rotation(wx, wy, wz, q[i])
            r00, r01, r02, r10, r11, r12, r20, r21, r22 = (
                e00 * r00 + e01 * r10 + e02 * r20, e00 * r01 + e01 * r11 + e02 * r21,
                e00 * r02 + e01 * r12 + e02 * r22, e10 * r00 + e11 * r10 + e12 * r20,
                e10 * r01 + e11 * r11 + e12 * r21, e10 * r02 + e11 * r12 + e12 * r22,
                e20 * r00 + e21 * r10 + e22 * r20, e20 * r01 + e21 * r11 + e22 * r21,
                e20 * r02 + e21 * r12 + e22 * r22)
            dx, dy, dz = tx - ox, ty - oy, tz - oz
            tx = e00 * dx + e01 * dy + e02 * dz + ox
            ty = e10 * dx + e11 * dy + e12 * dz + oy
            tz = e20 * dx + e21 * dy + e22 * dz + oz
        else:
            tx += q[i] * wx
            ty += q[i] * wy
            tz += q[i] * wz
    for k in range(n):
        g = n * J_WIDTH + k * A_WIDTH + A_ATTACH
        ax, ay, az = geo[g], geo[g + 1], geo[g + 2]
        px = r00 * ax + r01 * ay + r02 * az + tx
        py = r10 * ax + r11 * ay + r12 * az + ty
        pz = r20 * ax + r21 * ay + r22 * az + tz
        points[k, 0], points[k, 1], points[k, 2] = px, py, pz
        for i in range(n):
            wx, wy, wz = twists[i, 0], twists[i, 1], twists[i, 2]
            if kinds[i] == REVOLUTE:
                dx, dy, dz = px - twists[i, 3], py - twists[i, 4], pz - twists[i, 5]
                jacobians[k, 0, i] = wy * dz - wz * dy
                jacobians[k, 1, i] = wz * dx - wx * dz
                jacobians[k, 2, i] = wx * dy - wy * dx
            else:
                jacobians[k, 0, i], jacobians[k, 1, i], jacobians[k, 2, i] = wx, wy, wz


def driver(n, k, kinds, geo, u):
    """
    Return actuator k's driven point at ``u`` and its velocity per unit u: six numbers.

    Rotary: the crank point turned by ``u`` about the axis through the origin; slider:
    ``origin + u direction``; cylinder: the origin (its rod's length is what ``u`` changes).
    """
    g = n * J_WIDTH + k * A_WIDTH
    kind = kinds[n + k]
    ex, ey, ez = geo[g + A_AXIS], geo[g + A_AXIS + 1], geo[g + A_AXIS + 2]
    ox, oy, oz = geo[g + A_ORIGIN], geo[g + A_ORIGIN + 1], geo[g + A_ORIGIN + 2]
    if kind == ROTARY:
        rx = geo[g + A_CRANK] - ox
        ry = geo[g + A_CRANK + 1] - oy
        rz = geo[g + A_CRANK + 2] - oz
        e00, e01, e02, e10, e11, e12, e20, e21, e22 = _rotation(ex, ey, ez, u)
        dx = e00 * rx + e01 * ry + e02 * rz
        dy = e10 * rx + e11 * ry + e12 * rz
        dz = e20 * rx + e21 * ry + e22 * rz
        return (ox + dx, oy + dy, oz + dz, ey * dz - ez * dy, ez * dx - ex * dz,
                ex * dy - ey * dx)
    if kind == SLIDER:
        return ox + u * ex, oy + u * ey, oz + u * ez, ex, ey, ez
    return ox, oy, oz, 0.0, 0.0, 0.0


def actuator_coordinate(n, k, kinds, geo, px, py, pz):
    """
    Return actuator k's ``u`` for its attachment at ``p`` (closed form), or NaN if unreachable.

    Slider: ``u = w + s sqrt(w² - |p - o|² + L²)``, ``w = d . (p - o)``; rotary:
    ``A cos u + B sin u = C``, ``u = atan2(B, A) + s acos(C / sqrt(A² + B²))`` in
    (-pi, pi]; cylinder: ``u = |p - o| - L``. ``s`` is the branch of the zero pose.
    """
    g = n * J_WIDTH + k * A_WIDTH
    kind = kinds[n + k]
    L = geo[g + A_LENGTH]
    s = geo[g + A_BRANCH]
    dx = px - geo[g + A_ORIGIN]
    dy = py - geo[g + A_ORIGIN + 1]
    dz = pz - geo[g + A_ORIGIN + 2]
    if kind == CYLINDER:
        return math.sqrt(dx * dx + dy * dy + dz * dz) - L
    ex, ey, ez = geo[g + A_AXIS], geo[g + A_AXIS + 1], geo[g + A_AXIS + 2]
    if kind == SLIDER:
        w = ex * dx + ey * dy + ez * dz
        disc = w * w - (dx * dx + dy * dy + dz * dz) + L * L
        if disc < 0.0:
            return np.nan
        return w + s * math.sqrt(disc)
    rx = geo[g + A_CRANK] - geo[g + A_ORIGIN]
    ry = geo[g + A_CRANK + 1] - geo[g + A_ORIGIN + 1]
    rz = geo[g + A_CRANK + 2] - geo[g + A_ORIGIN + 2]
    along = ex * rx + ey * ry + ez * rz
    rx, ry, rz = rx - along * ex, ry - along * ey, rz - along * ez      # the crank radius
    dx, dy, dz = dx - along * ex, dy - along * ey, dz - along * ez
    sx, sy, sz = ey * rz - ez * ry, ez * rx - ex * rz, ex * ry - ey * rx
    A = dx * rx + dy * ry + dz * rz
    B = dx * sx + dy * sy + dz * sz
    C = 0.5 * (dx * dx + dy * dy + dz * dz + rx * rx + ry * ry + rz * rz - L * L)
    rho = math.sqrt(A * A + B * B)
    if rho == 0.0 or abs(C) > rho:
        return np.nan
    u = math.atan2(B, A) + s * math.acos(C / rho)
    if u > math.pi:
        u -= 2.0 * math.pi
    elif u <= -math.pi:
        u += 2.0 * math.pi
    return u


def rows(n, kinds, geo, u, points, jacobians, residual, G_q, G_u):
    """
    Fill the rods' equations at ``points`` for the actuators at ``u``, and their derivatives.

    ``residual[k]`` (m): ``|p_k - c_k(u_k)| - L_k`` for a rod, ``|p_k - o_k| - L_k - u_k`` for
    a cylinder; ``G_q[k]`` its gradient in q (the unit rod direction times the attachment's
    Jacobian); ``G_u[k]`` its derivative in u_k. Return the smallest |cos| of the angle
    between a rod and its driver's motion (1 for cylinders): near 0, a dead point.
    """
    worst = 1.0
    for k in range(n):
        cx, cy, cz, vx, vy, vz = driver(n, k, kinds, geo, u[k])
        dx, dy, dz = points[k, 0] - cx, points[k, 1] - cy, points[k, 2] - cz
        length = math.sqrt(dx * dx + dy * dy + dz * dz)
        g = n * J_WIDTH + k * A_WIDTH
        nx, ny, nz = dx / length, dy / length, dz / length
        if kinds[n + k] == CYLINDER:
            residual[k] = length - geo[g + A_LENGTH] - u[k]
            G_u[k] = -1.0
        else:
            residual[k] = length - geo[g + A_LENGTH]
            along = nx * vx + ny * vy + nz * vz
            G_u[k] = -along
            cosine = abs(along) / math.sqrt(vx * vx + vy * vy + vz * vz)
            if cosine < worst:
                worst = cosine
        for i in range(n):
            G_q[k, i] = (nx * jacobians[k, 0, i] + ny * jacobians[k, 1, i]
                         + nz * jacobians[k, 2, i])
    return worst


def inverse(A, n, out, M):
    """
    Write the inverse of ``A`` (n, n) into ``out``; return its 1-norm condition number.

    Gauss-Jordan with partial pivoting in ``M`` (n, 2 n, scratch); inf when singular.
    """
    for r in range(n):
        for col in range(n):
            M[r, col] = A[r, col]
            M[r, n + col] = 1.0 if r == col else 0.0
    for col in range(n):
        pivot = col
        for r in range(col + 1, n):
            if abs(M[r, col]) > abs(M[pivot, col]):
                pivot = r
        if M[pivot, col] == 0.0:
            return np.inf
        if pivot != col:
            for j in range(2 * n):
                M[col, j], M[pivot, j] = M[pivot, j], M[col, j]
        scale = 1.0 / M[col, col]
        for j in range(2 * n):
            M[col, j] *= scale
        for r in range(n):
            if r != col and M[r, col] != 0.0:
                f = M[r, col]
                for j in range(2 * n):
                    M[r, j] -= f * M[col, j]
    norm_a = 0.0
    norm_i = 0.0
    for col in range(n):
        sa = 0.0
        si = 0.0
        for r in range(n):
            out[r, col] = M[r, n + col]
            sa += abs(A[r, col])
            si += abs(out[r, col])
        norm_a = max(norm_a, sa)
        norm_i = max(norm_i, si)
    return norm_a * norm_i


def _views(n, buf):
    """Return the scratch arrays the loops use, as views of ``buf`` (:func:`scratch_size`)."""
    at = 0
    points = buf[at:at + 3 * n].reshape(n, 3)
    at += 3 * n
    jac = buf[at:at + 3 * n * n].reshape(n, 3, n)
    at += 3 * n * n
    twists = buf[at:at + 6 * n].reshape(n, 6)
    at += 6 * n
    residual = buf[at:at + n]
    at += n
    G_q = buf[at:at + n * n].reshape(n, n)
    at += n * n
    G_u = buf[at:at + n]
    at += n
    inv = buf[at:at + n * n].reshape(n, n)
    at += n * n
    M = buf[at:at + 2 * n * n].reshape(n, 2 * n)
    at += 2 * n * n
    x = buf[at:at + n]
    at += n
    step = buf[at:at + n]
    at += n
    J_x = buf[at:at + n * n].reshape(n, n)
    at += n * n
    u = buf[at:at + n]
    at += n
    return points, jac, twists, residual, G_q, G_u, inv, M, x, step, J_x, u, buf[at:]


def solve(n, kinds, geo, u, q, buf):
    """
    Solve the rods' equations for the joints ``q`` (n,) given the actuators ``u``, in place.

    Newton from ``q`` (the previous solution), each step at most :data:`MAX_STEP`, until every
    residual is within :data:`RESIDUAL_TOL` (m) and the joints are at rounding: the step that
    got there was at most :data:`FINE_STEP` (Newton's convergence being quadratic, the error
    left is of its square), or the residual is at rounding (:data:`ROUNDING_TOL`: the start
    was the solution), or else after one step more. Return a status; ``q`` holds the
    solution only when it is :data:`OK` (on failure it is left as it came). ``buf`` is
    scratch (:func:`scratch_size`); on success its rod rows (``G_q``, ``G_u``) are those of
    the solution and its ``inv`` their inverse ``G_q^-1``.
    """
    points, jac, twists, residual, G_q, G_u, inv, M, x, step, _, _, _ = _views(n, buf)
    for i in range(n):
        x[i] = q[i]
    polished = False
    last = math.inf
    transmission = 1.0
    for _ in range(MAX_ITERATIONS):
        chain(x, n, kinds, geo, points, jac, twists)
        transmission = rows(n, kinds, geo, u, points, jac, residual, G_q, G_u)
        worst = 0.0
        for k in range(n):
            worst = max(worst, abs(residual[k]))
        converged = worst <= RESIDUAL_TOL
        if converged and (polished or last <= FINE_STEP or worst <= ROUNDING_TOL):
            break
        if inverse(G_q, n, inv, M) > MAX_CONDITION:
            return SINGULAR
        largest = 0.0
        for i in range(n):
            s = 0.0
            for k in range(n):
                s -= inv[i, k] * residual[k]
            step[i] = s
            largest = max(largest, abs(s))
        scale = 1.0 if largest <= MAX_STEP else MAX_STEP / largest
        for i in range(n):
            x[i] += scale * step[i]
        last = scale * largest
        polished = converged
    else:
        return NOT_CONVERGED
    if transmission < MIN_TRANSMISSION or inverse(G_q, n, inv, M) > MAX_CONDITION:
        return SINGULAR
    for i in range(n):
        g = i * J_WIDTH
        value = x[i] + geo[g + J_OFFSET]
        if value < geo[g + J_LOWER] or value > geo[g + J_UPPER]:
            return OUT_OF_LIMITS
    for i in range(n):
        q[i] = x[i]
    return OK


def _actuator_jacobian(n, geo, G_q, G_u, J_x):
    """Fill ``J_x`` = d x_a / d q from the rods' rows: ``d u / d q = -G_u^-1 G_q``, x_a = n u."""
    for k in range(n):
        reduction = geo[n * J_WIDTH + k * A_WIDTH + A_REDUCTION]
        for i in range(n):
            J_x[k, i] = -reduction * G_q[k, i] / G_u[k]


def state(n, kinds, geo, damping, x_a, v_a, tau_a, q_warm, out_q, out_v, out_tau, buf):
    """
    Map one actuator state to the joints: positions, velocities, efforts after damping.

    ``x_a``, ``v_a``, ``tau_a`` (n,) in actuator order; ``q_warm`` the previous geometric
    solution, updated in place on success. Writes the published joint positions
    (``q + offset``), ``v_j = J v_a`` and ``tau_j = J^-T tau_a - b v_j`` with ``J = J_x^-1``
    (no damping where the velocity is unknown). Returns a status; on failure nothing is
    written and ``q_warm`` is unchanged.
    """
    _, _, _, _, G_q, G_u, inv, _, _, _, J_x, u, _ = _views(n, buf)
    for k in range(n):
        u[k] = x_a[k] / geo[n * J_WIDTH + k * A_WIDTH + A_REDUCTION]
    status = solve(n, kinds, geo, u, q_warm, buf)
    if status != OK:
        return status
    _actuator_jacobian(n, geo, G_q, G_u, J_x)
    # J = J_x^-1 = G_q^-1 diag(-G_u / n): solve's inverse, its columns scaled.
    for k in range(n):
        scale = -G_u[k] / geo[n * J_WIDTH + k * A_WIDTH + A_REDUCTION]
        for i in range(n):
            inv[i, k] *= scale
    for i in range(n):
        out_q[i] = q_warm[i] + geo[i * J_WIDTH + J_OFFSET]
        v = 0.0
        tau = 0.0
        for k in range(n):
            v += inv[i, k] * v_a[k]
            tau += J_x[k, i] * tau_a[k]
        out_v[i] = v
        out_tau[i] = tau - damping[i] * v if v == v else tau
    return OK


def command(n, kinds, geo, q_j, v_j, a_j, tau_j, has, out_x, out_v, out_a, out_tau, buf):
    """
    Map joint set-points to the actuators: positions, velocities, accelerations, efforts.

    ``q_j`` are published joint positions (offsets included; needed for every interface:
    the maps depend on the configuration); ``has`` (4,) says which of velocity, acceleration
    and effort are given (index 1, 2, 3). Velocities ``v_a = J_x v_j``, efforts
    ``tau_a = J_x^-T tau_j``, accelerations ``a_a = J_x a_j + J_x-dot v_j`` from the rods'
    equations differentiated twice. Returns a status: :data:`UNREACHABLE` where a rod cannot
    reach its attachment.
    """
    points, jac, twists, residual, G_q, G_u, inv, M, q, _, J_x, u, rest = _views(n, buf)
    for i in range(n):
        q[i] = q_j[i] - geo[i * J_WIDTH + J_OFFSET]
    chain(q, n, kinds, geo, points, jac, twists)
    for k in range(n):
        u[k] = actuator_coordinate(n, k, kinds, geo, points[k, 0], points[k, 1],
                                   points[k, 2])
        if u[k] != u[k]:
            return UNREACHABLE
        out_x[k] = u[k] * geo[n * J_WIDTH + k * A_WIDTH + A_REDUCTION]
    if not (has[1] or has[2] or has[3]):
        return OK
    if rows(n, kinds, geo, u, points, jac, residual, G_q, G_u) < MIN_TRANSMISSION:
        return SINGULAR
    _actuator_jacobian(n, geo, G_q, G_u, J_x)
    if has[1] or has[2]:
        for k in range(n):
            s = 0.0
            for i in range(n):
                s += J_x[k, i] * v_j[i]
            out_v[k] = s
    if has[3]:
        if inverse(J_x, n, inv, M) > MAX_CONDITION:
            return SINGULAR
        for k in range(n):
            s = 0.0
            for i in range(n):
                s += inv[i, k] * tau_j[i]
            out_tau[k] = s
    if has[2]:
        _accelerations(n, kinds, geo, u, v_j, a_j, points, jac, twists, out_a,
                       rest[:3 * n].reshape(n, 3))
    return OK


def _bias(n, kinds, v, twists, points, out):
    """
    Write each attachment's acceleration at zero joint accelerations (n, 3): J_p-dot v.

    With the spatial velocity of the output body ``V = sum xi'_i v_i`` and the twists' own
    rates ``d xi'_i / dt = [V_<i, xi'_i]`` (the Lie bracket with the velocity of the chain
    before joint i: ``[(w1, v1), (w2, v2)] = (w1 x w2, w1 x v2 - w2 x v1)``):
    ``p'' = w' x p + w x p' + v'`` for each point ``p``.
    """
    wx = wy = wz = 0.0          # angular velocity of the chain before joint i
    vx = vy = vz = 0.0          # its linear part (velocity of the point at the origin)
    dwx = dwy = dwz = 0.0       # the twists' rates times v_i, summed: angular, then linear
    dvx = dvy = dvz = 0.0
    for i in range(n):
        axx, axy, axz = twists[i, 0], twists[i, 1], twists[i, 2]
        if kinds[i] == REVOLUTE:
            ox, oy, oz = twists[i, 3], twists[i, 4], twists[i, 5]
            lx, ly, lz = -(axy * oz - axz * oy), -(axz * ox - axx * oz), -(axx * oy - axy * ox)
            gx, gy, gz = axx, axy, axz
        else:
            lx, ly, lz = axx, axy, axz
            gx = gy = gz = 0.0
        # [V_<i, xi'_i] = (w x g, w x l - g x v)
        dwx += v[i] * (wy * gz - wz * gy)
        dwy += v[i] * (wz * gx - wx * gz)
        dwz += v[i] * (wx * gy - wy * gx)
        dvx += v[i] * ((wy * lz - wz * ly) - (gy * vz - gz * vy))
        dvy += v[i] * ((wz * lx - wx * lz) - (gz * vx - gx * vz))
        dvz += v[i] * ((wx * ly - wy * lx) - (gx * vy - gy * vx))
        wx += v[i] * gx
        wy += v[i] * gy
        wz += v[i] * gz
        vx += v[i] * lx
        vy += v[i] * ly
        vz += v[i] * lz
    for k in range(n):
        px, py, pz = points[k, 0], points[k, 1], points[k, 2]
        qx, qy, qz = wy * pz - wz * py + vx, wz * px - wx * pz + vy, wx * py - wy * px + vz
        out[k, 0] = dwy * pz - dwz * py + wy * qz - wz * qy + dvx
        out[k, 1] = dwz * px - dwx * pz + wz * qx - wx * qz + dvy
        out[k, 2] = dwx * py - dwy * px + wx * qy - wy * qx + dvz


def _accelerations(n, kinds, geo, u, v_j, a_j, points, jac, twists, out, acc):
    """Write ``x_a''`` for joint velocities ``v_j`` and accelerations ``a_j`` (see command)."""
    _bias(n, kinds, v_j, twists, points, acc)
    for k in range(n):
        pdx = pdy = pdz = 0.0
        for i in range(n):
            pdx += jac[k, 0, i] * v_j[i]
            pdy += jac[k, 1, i] * v_j[i]
            pdz += jac[k, 2, i] * v_j[i]
            acc[k, 0] += jac[k, 0, i] * a_j[i]
            acc[k, 1] += jac[k, 1, i] * a_j[i]
            acc[k, 2] += jac[k, 2, i] * a_j[i]
        g = n * J_WIDTH + k * A_WIDTH
        cx, cy, cz, vx, vy, vz = driver(n, k, kinds, geo, u[k])
        dx, dy, dz = points[k, 0] - cx, points[k, 1] - cy, points[k, 2] - cz
        if kinds[n + k] == CYLINDER:
            length = math.sqrt(dx * dx + dy * dy + dz * dz)
            mx, my, mz = dx / length, dy / length, dz / length
            along = mx * pdx + my * pdy + mz * pdz
            udd = (mx * acc[k, 0] + my * acc[k, 1] + mz * acc[k, 2]
                   + (pdx * pdx + pdy * pdy + pdz * pdz - along * along) / length)
        else:
            # (p - c) . (p' - c' u') = 0 twice: u'' = (|p' - c' u'|² + (p - c).(p'' - c'' u'²))
            # / ((p - c) . c'), with c'' = e x c' for a crank and 0 for a slider.
            denominator = dx * vx + dy * vy + dz * vz
            ud = (dx * pdx + dy * pdy + dz * pdz) / denominator
            ax = ay = az = 0.0
            if kinds[n + k] == ROTARY:
                ex, ey, ez = geo[g + A_AXIS], geo[g + A_AXIS + 1], geo[g + A_AXIS + 2]
                ax, ay, az = ey * vz - ez * vy, ez * vx - ex * vz, ex * vy - ey * vx
            rx, ry, rz = pdx - ud * vx, pdy - ud * vy, pdz - ud * vz
            num = (rx * rx + ry * ry + rz * rz
                   + dx * (acc[k, 0] - ax * ud * ud) + dy * (acc[k, 1] - ay * ud * ud)
                   + dz * (acc[k, 2] - az * ud * ud))
            udd = num / denominator
        out[k] = geo[g + A_REDUCTION] * udd


# --- a set's linkages, in one call ----------------------------------------------------------
# ``layout`` (int): the number of linkages M, then per linkage (n, kinds offset, geo offset,
# index offset, state offset) into: ``layout`` itself for the kinds and the indices (the n
# joints' columns in the set's joint vector, then the n actuators'), ``floats`` for the
# geometry (then each joint's damping), ``warm`` for the previous solution.
L_HEADER, L_WIDTH = 1, 5


def set_state(flat, n_act, out, layout, floats, warm, status, jac):
    """
    Write every linkage's joints of one actuator state into ``out`` (3, nJ); count refusals.

    ``flat``: the set's actuator positions, velocities and efforts (3 nA), then 1.0, as the
    bridge keeps them. A linkage whose actuator position is unknown (NaN) gets NaN joints
    (status -1, not a refusal); one refused gets NaN joints and its status (> 0). ``jac``
    (nJ, nA): each linkage's block of the velocity map J = dq/dx_a at the solved pose
    (what :func:`state` found on its way), NaN where the state is unknown or refused.
    """
    refused = 0
    widest = 0
    for m in range(layout[0]):
        widest = max(widest, layout[L_HEADER + L_WIDTH * m])
    buf = np.empty(scratch_size(widest) + 6 * widest)
    for m in range(layout[0]):
        h = L_HEADER + L_WIDTH * m
        n, k_at, g_at, i_at, w_at = (layout[h], layout[h + 1], layout[h + 2], layout[h + 3],
                                     layout[h + 4])
        size = n * (J_WIDTH + A_WIDTH)
        kinds = layout[k_at:k_at + 2 * n]
        geo = floats[g_at:g_at + size]
        damping = floats[g_at + size:g_at + size + n]
        io = buf[scratch_size(widest):]
        x_a, v_a, tau_a, q, v, tau = (io[:n], io[n:2 * n], io[2 * n:3 * n],
                                      io[3 * n:4 * n], io[4 * n:5 * n], io[5 * n:6 * n])
        known = True
        for k in range(n):
            a = layout[i_at + n + k]
            x_a[k] = flat[a]
            v_a[k] = flat[n_act + a]
            tau_a[k] = flat[2 * n_act + a]
            if x_a[k] != x_a[k]:
                known = False
        code = -1
        if known:
            code = state(n, kinds, geo, damping, x_a, v_a, tau_a, warm[w_at:w_at + n], q, v,
                         tau, buf)
        status[m] = code
        J = _views(n, buf)[6]                   # state's J = J_x^-1 when OK
        for i in range(n):
            j = layout[i_at + i]
            if code == OK:
                out[0, j], out[1, j], out[2, j] = q[i], v[i], tau[i]
            else:
                out[0, j] = out[1, j] = out[2, j] = np.nan
            for k in range(n):
                jac[j, layout[i_at + n + k]] = J[i, k] if code == OK else np.nan
        if code > 0:
            refused += 1
    return refused


def set_state_rows(rows, n_act, out, layout, floats, warm, status):
    """:func:`set_state` of every row of ``rows`` (R, 3 nA + 1) in order, into ``out``."""
    refused = 0
    jac = np.empty((out.shape[2], n_act))       # the velocity maps: not kept for a batch
    for r in range(rows.shape[0]):
        refused += set_state(rows[r], n_act, out[r], layout, floats, warm, status[r], jac)
    return refused


# --- joint impedance at a state, for MIT-mode motors ----------------------------------------
def mit_state(jac, joints, motors, kp, kd, goal, tau_ff, flat, n_act, out):
    """
    Write the MIT-mode commands of a joint spring at one state into ``out`` (m, 5): True.

    ``jac`` (nJ, nA): the velocity map J at the state (:func:`set_state`); ``joints`` and
    ``motors``: the spring's columns in it (its transmissions' joints and motors); ``kp``,
    ``kd``, ``tau_ff`` per joint of ``joints``; ``goal`` (2, m) the motors' targets θ*, θ̇*;
    ``flat`` the motors' state (positions, then velocities at ``n_act``; an unknown
    velocity taken as 0). Per motor r: θ*, θ̇*, the feed-forward, and the diagonals
    k_r = Σ_i J_ir² kp_i and d_r of K_a = Jᵀ Kp J and D_a = Jᵀ Kd J; the feed-forward
    Σ_i J_ir (τ*_i + kp_i (s_i − J_ir e_r) + kd_i (ṡ_i − J_ir ė_r)), with e = θ* − θ,
    s = J e (and the same of the velocities), is Jᵀ τ* plus the off-diagonal rest of
    K_a e + D_a ė. False (``out`` unusable) where a value is not finite.
    """
    m = len(motors)
    e = np.empty(m)
    ed = np.empty(m)
    for c in range(m):
        v = flat[n_act + motors[c]]
        e[c] = goal[0, c] - flat[motors[c]]
        ed[c] = goal[1, c] - (v if v == v else 0.0)
    s = np.empty(len(joints))
    sd = np.empty(len(joints))
    for i in range(len(joints)):
        a = 0.0
        b = 0.0
        for c in range(m):
            x = jac[joints[i], motors[c]]
            if x != 0.0:
                a += x * e[c]
                b += x * ed[c]
        s[i] = a
        sd[i] = b
    finite = True
    for r in range(m):
        k = 0.0
        d = 0.0
        f = 0.0
        for i in range(len(joints)):
            x = jac[joints[i], motors[r]]
            if x != 0.0:
                k += x * x * kp[i]
                d += x * x * kd[i]
                f += x * (tau_ff[i] + kp[i] * (s[i] - x * e[r]) + kd[i] * (sd[i] - x * ed[r]))
        out[r, 0] = goal[0, r]
        out[r, 1] = goal[1, r]
        out[r, 2] = f
        out[r, 3] = k
        out[r, 4] = d
        if not (abs(f) < math.inf and abs(k) < math.inf and abs(d) < math.inf):
            finite = False
    return finite


def set_command_rows(q_j, v_j, a_j, tau_j, has, layout, floats, out_x, out_v, out_a,
                     out_tau, status):
    """
    Map every row's joint set-points of every linkage to its actuators (:func:`command`).

    ``q_j`` ... ``tau_j`` (R, nJ), ``out_*`` (R, nA), written only in the linkages'
    actuators; ``has`` as :func:`command` takes it; ``status`` (R, M). A row whose linkage
    joints' positions are unknown (NaN) is status -1, its actuators NaN.
    """
    widest = 0
    for m in range(layout[0]):
        widest = max(widest, layout[L_HEADER + L_WIDTH * m])
    buf = np.empty(scratch_size(widest) + 8 * widest)
    io = buf[scratch_size(widest):]
    for r in range(q_j.shape[0]):
        for m in range(layout[0]):
            h = L_HEADER + L_WIDTH * m
            n, k_at, g_at, i_at = layout[h], layout[h + 1], layout[h + 2], layout[h + 3]
            kinds = layout[k_at:k_at + 2 * n]
            geo = floats[g_at:g_at + n * (J_WIDTH + A_WIDTH)]
            q, v, a, tau = io[:n], io[n:2 * n], io[2 * n:3 * n], io[3 * n:4 * n]
            known = True
            for i in range(n):
                j = layout[i_at + i]
                q[i] = q_j[r, j]
                v[i] = v_j[r, j] if has[1] or has[2] else 0.0
                a[i] = a_j[r, j] if has[2] else 0.0
                tau[i] = tau_j[r, j] if has[3] else 0.0
                if q[i] != q[i]:
                    known = False
            for k in range(n):
                c = layout[i_at + n + k]
                out_x[r, c] = out_v[r, c] = out_a[r, c] = out_tau[r, c] = np.nan
            code = -1
            if known:
                x_k, v_k, a_k, t_k = (io[4 * n:5 * n], io[5 * n:6 * n], io[6 * n:7 * n],
                                      io[7 * n:8 * n])
                code = command(n, kinds, geo, q, v, a, tau, has, x_k, v_k, a_k, t_k, buf)
                if code == OK:
                    for k in range(n):
                        c = layout[i_at + n + k]
                        out_x[r, c] = x_k[k]
                        out_v[r, c] = v_k[k] if has[1] or has[2] else np.nan
                        out_a[r, c] = a_k[k] if has[2] else np.nan
                        out_tau[r, c] = t_k[k] if has[3] else np.nan
            status[r, m] = code


def effort_state(jac, joints, motors, kp, kd, target, damping, state, inv_joint, inv_motor,
                 tau, out):
    """
    Write the motor efforts of a joint spring at one state into ``out`` (m,); return a ratio.

    ``state`` (3, nJ): the joint state the map published (positions, velocities; an unknown
    velocity taken as 0); ``target`` (3, k) q*, q̇*, τ* and ``kp``, ``kd``, ``damping`` (b)
    per joint of ``joints``; ``jac`` the velocity map J at the state. Writes
    ``tau`` (k,) = Kp (q* − q) + Kd (q̇* − q̇) + τ* + b q̇ (the damping loss added back) and
    ``out`` = Jᵀ tau over ``motors``. Returns the largest |effort| / limit over both
    (``inv_joint``, ``inv_motor``: 1 / limit, 0 where unlimited): at most 1 is within every
    limit; NaN where a value is not finite.
    """
    worst = 0.0
    for i in range(len(joints)):
        v = state[1, joints[i]]
        v = v if v == v else 0.0
        t = (kp[i] * (target[0, i] - state[0, joints[i]]) + kd[i] * (target[1, i] - v)
             + target[2, i] + damping[i] * v)
        tau[i] = t
        if not abs(t) < math.inf:
            return np.nan
        worst = max(worst, abs(t) * inv_joint[i])
    for r in range(len(motors)):
        f = 0.0
        for i in range(len(joints)):
            x = jac[joints[i], motors[r]]
            if x != 0.0:
                f += x * tau[i]
        out[r] = f
        if not abs(f) < math.inf:
            return np.nan
        worst = max(worst, abs(f) * inv_motor[r])
    return worst
