"""Robots used by the benchmarks, generated in code (no files needed)."""

import numpy as np

from transmission_bridge.transmissions import parse_transmissions


def _items_24(seed, prefix=''):
    rng = np.random.default_rng(seed)
    items = []
    for k in range(8):
        items.append(_simple(f'{prefix}s{k}', rng))
    for kind, count in (('differential', 4), ('four_bar_linkage', 4)):
        for k in range(count):
            tag = f'{prefix}{kind[0]}{k}'
            items.append({'name': tag, 'type': kind,
                          'actuators': [{'name': f'{tag}_m{r}',
                                         'mechanical_reduction': float(rng.uniform(5, 50))}
                                        for r in (1, 2)],
                          'joints': [{'name': f'{tag}_j{r}',
                                      'mechanical_reduction': float(rng.uniform(0.5, 2)),
                                      'offset': float(rng.normal())} for r in (1, 2)]})
    return items


def _simple(tag, rng):
    return {'name': tag, 'type': 'simple',
            'actuators': [{'name': f'{tag}_motor',
                           'mechanical_reduction': float(rng.uniform(10, 100))}],
            'joints': [{'name': f'{tag}_joint', 'offset': float(rng.normal()), 'damping': 0.1}]}


def transmissions_24(seed=0):
    """Return a 24-actuator robot with all three transmission types (8 simple, 4 + 4 pairs)."""
    return parse_transmissions({'transmissions': _items_24(seed)})


def transmissions_n(count, seed=0):
    """Return a ``count``-actuator robot: copies of the 24-actuator mix, then simple ones."""
    items = []
    for copy in range(count // 24):
        items += _items_24(seed + copy, f'c{copy}_')
    rng = np.random.default_rng(seed)
    items += [_simple(f'extra{k}', rng) for k in range(count % 24)]
    return parse_transmissions({'transmissions': items})


def arm7_with_screws(seed=0):
    """Return a 7-DOF serial arm: 5 revolute and 2 screw joints, tilted axes, with masses."""
    from transmission_bridge.kinematics import (
        Body, Inertial, Model, RevoluteJoint, ScrewJoint)
    from transmission_bridge.kinematics.spatial import origin_transform
    rng = np.random.default_rng(seed)
    bodies, parent = [], 'world'
    for i in range(7):
        origin = origin_transform(rng.uniform(-0.2, 0.2, 3) + [0, 0, 0.15],
                                  rng.uniform(-0.5, 0.5, 3))
        axis = rng.normal(size=3)
        joint = (ScrewJoint(f'j{i}', axis=axis, origin=origin, pitch=0.05)
                 if i in (2, 5) else RevoluteJoint(f'j{i}', axis=axis, origin=origin))
        bodies.append(Body(f'l{i}', joint, Inertial(rng.uniform(0.5, 3.0),
                                                    rng.uniform(-0.1, 0.1, 3), 0.01, 0.01,
                                                    0.01), parent))
        parent = f'l{i}'
    return Model(bodies, 'arm7_screws')


def puma560():
    """Return MATLAB's Puma 560 example by standard DH parameters (unit masses)."""
    from transmission_bridge.kinematics import parse_model
    rows = [[0, np.pi / 2, 0, 0], [0.4318, 0, 0, 0], [0.0203, -np.pi / 2, 0.15005, 0],
            [0, np.pi / 2, 0.4318, 0], [0, -np.pi / 2, 0, 0], [0, 0, 0, 0]]
    return parse_model({'dh': {'convention': 'standard', 'rows': [
        {'name': f'j{i + 1}', 'link': f'link{i + 1}', 'a': r[0], 'alpha': r[1], 'd': r[2],
         'theta': r[3], 'inertial': {'mass': 1.0, 'com': [0.0, 0.0, 0.05]}}
        for i, r in enumerate(rows)]}})


def transmissions_12(seed=0):
    """Return a 12-actuator robot: 4 simple, 2 differential and 2 four-bar transmissions."""
    full = transmissions_24(seed)
    from transmission_bridge.transmissions import TransmissionSet
    specs = [s for s in full.specs if s.type == 'simple'][:4]
    specs += [s for s in full.specs if s.type == 'differential'][:2]
    specs += [s for s in full.specs if s.type == 'four_bar_linkage'][:2]
    return TransmissionSet(specs)


def write_transmissions(ts, path):
    """Write ``ts`` as a transmissions YAML file (what the nodes load) and return ``path``."""
    import yaml
    path.write_text(yaml.safe_dump({'transmissions': [
        {'name': s.name, 'type': s.type,
         'actuators': [{'name': a.name, 'mechanical_reduction': a.mechanical_reduction}
                       for a in s.actuators],
         'joints': [{'name': j.name, 'mechanical_reduction': j.mechanical_reduction,
                     'offset': j.offset, 'damping': j.damping} for j in s.joints]}
        for s in ts.specs]}))
    return path
