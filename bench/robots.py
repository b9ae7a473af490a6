"""Robots used by the benchmarks, generated in code (no files needed)."""

import numpy as np

from transmission_bridge.transmissions import parse_transmissions


def transmissions_24(seed=0):
    """Return a 24-actuator robot with all three transmission types (8 simple, 4 + 4 pairs)."""
    rng = np.random.default_rng(seed)
    items = []
    for k in range(8):
        items.append({'name': f's{k}', 'type': 'simple',
                      'actuators': [{'name': f's{k}_motor',
                                     'mechanical_reduction': float(rng.uniform(10, 100))}],
                      'joints': [{'name': f's{k}_joint', 'offset': float(rng.normal()),
                                  'damping': 0.1}]})
    for kind, count in (('differential', 4), ('four_bar_linkage', 4)):
        for k in range(count):
            tag = f'{kind[0]}{k}'
            items.append({'name': tag, 'type': kind,
                          'actuators': [{'name': f'{tag}_m{r}',
                                         'mechanical_reduction': float(rng.uniform(5, 50))}
                                        for r in (1, 2)],
                          'joints': [{'name': f'{tag}_j{r}',
                                      'mechanical_reduction': float(rng.uniform(0.5, 2)),
                                      'offset': float(rng.normal())} for r in (1, 2)]})
    return parse_transmissions({'transmissions': items})
