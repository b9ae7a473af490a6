"""Helpers for the YAML loader tests: a valid document with one key broken."""

import copy


def broken(document, path, value):
    """Return a deep copy of ``document`` with the key at ``path`` set to ``value``.

    ``value`` KeyError deletes the key instead.
    """
    data = copy.deepcopy(document)
    target = data
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data
