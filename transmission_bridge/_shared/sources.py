"""
Where a robot description comes from, for both libraries.

A YAML or URDF file, URDF text, or an already parsed mapping. Files are opened read-only;
every error is the caller's exception type and names the path.
"""

import os

import yaml

from . import urdf_xml as _xml


def load(source, error, from_urdf, from_mapping):
    """
    Return ``from_urdf(text)`` or ``from_mapping(data)`` for ``source``.

    URDF: text starting with ``<``, or a path ending in ``.urdf`` / ``.xml``. Any other
    path is YAML (``yaml.safe_load`` only); errors from it are prefixed with the path.
    Anything else is taken as the parsed mapping.
    """
    if _xml.looks_like_xml(source):
        return from_urdf(source)
    if not isinstance(source, (str, os.PathLike)):
        return from_mapping(source)
    if str(source).endswith(('.urdf', '.xml')):
        return from_urdf(read_text(source, error))
    data = read_yaml(source, error)
    try:
        return from_mapping(data)
    except error as exc:
        raise error(f'{os.fspath(source)}: {exc}') from None


def read_text(path, error):
    """Return the text of the file at ``path``; errors name the path."""
    try:
        with open(path, 'r', encoding='utf-8') as stream:
            return stream.read()
    except (OSError, ValueError) as exc:     # ValueError: a NUL byte in the path
        raise error(f'cannot read {os.fspath(path)!r}: '
                    f'{getattr(exc, "strerror", None) or exc}') from None


def read_yaml(path, error):
    """Parse the YAML file at ``path`` with the safe loader; errors name the path."""
    text = read_text(path, error)
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise error(f'{os.fspath(path)!r} is not valid YAML: {exc}') from None
