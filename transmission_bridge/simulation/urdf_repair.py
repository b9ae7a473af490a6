"""
Real URDFs' inertials, made ones MuJoCo's compiler takes: each change said, naming the link.

MuJoCo refuses a moving body lighter than its ``mjMINVAL``, an inertia tensor with an
eigenvalue ≤ 0, and principal moments that break the triangle inequality (A + B ≥ C): a third
of example-robot-data's URDFs carry one of them (rounded CAD exports, dummy links between two
joints). The nearest physical values are used instead, and the warning says which.
"""

import numpy as np

MIN_MASS = 1e-6          # kg: given to a moving link without mass
MIN_INERTIA = 1e-9       # kg m²: the smallest principal moment kept
TRIANGLE_MARGIN = 1e-9   # A + B this much past C: MuJoCo's test survives the rounding
_NAMES = ('ixx', 'iyy', 'izz', 'ixy', 'ixz', 'iyz')


def _tensor(inertia):
    v = {k: float(inertia.get(k, 0.0)) for k in _NAMES}
    return np.array([[v['ixx'], v['ixy'], v['ixz']], [v['ixy'], v['iyy'], v['iyz']],
                     [v['ixz'], v['iyz'], v['izz']]])


def physical(tensor):
    """Return the nearest tensor with moments ≥ MIN_INERTIA and A + B ≥ C (itself if so)."""
    moments, axes = np.linalg.eigh(tensor)
    fixed = np.maximum(moments, MIN_INERTIA)
    short = fixed[2] * (1 + TRIANGLE_MARGIN) - fixed[0] - fixed[1]   # eigh sorts: largest last
    if fixed[0] + fixed[1] < fixed[2]:
        fixed[:2] += short / 2
    if np.array_equal(fixed, moments):
        return tensor
    return (axes * fixed) @ axes.T


def repair_inertials(root):
    """Make every link of ``root`` (a URDF element tree) compile; return the warnings."""
    import xml.etree.ElementTree as ElementTree
    moving = {j.find('child').get('link') for j in root.findall('joint')
              if j.get('type', 'fixed') != 'fixed'}
    warnings = []
    for link in root.findall('link'):
        name = link.get('name')
        inertial = link.find('inertial')
        if inertial is None:
            if name in moving:
                inertial = ElementTree.SubElement(link, 'inertial')
                ElementTree.SubElement(inertial, 'mass', value=repr(MIN_MASS))
                ElementTree.SubElement(inertial, 'inertia', **{
                    k: repr(MIN_INERTIA if k in _NAMES[:3] else 0.0) for k in _NAMES})
                warnings.append(f'link {name!r}: no inertial on a moving link; MuJoCo needs '
                                f'one: {MIN_MASS:g} kg and {MIN_INERTIA:g} kg m^2 assumed')
            continue
        mass = inertial.find('mass')
        value = float(mass.get('value', 0.0)) if mass is not None else 0.0
        if name in moving and value < MIN_MASS:
            if mass is None:
                mass = ElementTree.SubElement(inertial, 'mass')
            mass.set('value', repr(MIN_MASS))
            warnings.append(f'link {name!r}: mass {value:g} kg on a moving link; MuJoCo needs '
                            f'more: {MIN_MASS:g} kg assumed')
        inertia = inertial.find('inertia')
        if inertia is None:
            continue
        given = _tensor(inertia)
        if name not in moving and not given.any():
            continue
        used = physical(given)
        if used is not given:
            for k, (r, c) in zip(_NAMES, ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))):
                inertia.set(k, repr(float(used[r, c])))
            warnings.append(
                f'link {name!r}: inertia not physical (principal moments '
                f'{", ".join(f"{m:.3g}" for m in np.linalg.eigvalsh(given))}); the nearest '
                f'physical one used ({", ".join(f"{m:.3g}" for m in np.linalg.eigvalsh(used))})')
    return warnings
