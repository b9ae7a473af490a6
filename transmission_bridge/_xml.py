"""
Safe XML parsing for robot descriptions, with the standard library only.

URDF needs no DTD, so any document with a DOCTYPE, an entity declaration or an
external reference is refused before it is parsed (what ``defusedxml`` does with
``forbid_dtd``): no entity expansion ("billion laughs"), no external fetches.

>>> parse('<robot name="r"/>', ValueError).get('name')
'r'
>>> parse('<!DOCTYPE r [<!ENTITY a "b">]><robot/>', ValueError)
Traceback (most recent call last):
    ...
ValueError: robot description refused: it declares a DOCTYPE (not allowed in URDF)
"""

import xml.etree.ElementTree as ElementTree
from xml.parsers import expat


class _Refused(Exception):
    pass


def _refuse(*_args):
    raise _Refused()


def parse(text, error):
    """Return the root element of XML ``text``; raise ``error`` with the reason if refused."""
    if isinstance(text, bytes):
        text = text.decode('utf-8', errors='replace')
    if not isinstance(text, str) or not text.strip():
        raise error('robot description is empty')
    scanner = expat.ParserCreate()
    scanner.StartDoctypeDeclHandler = _refuse
    scanner.EntityDeclHandler = _refuse
    scanner.ExternalEntityRefHandler = _refuse
    try:
        scanner.Parse(text, True)
    except _Refused:
        raise error('robot description refused: it declares a DOCTYPE (not allowed in URDF)') \
            from None
    except expat.ExpatError as exc:
        raise error(f'robot description is not valid XML: {exc}') from None
    return ElementTree.fromstring(text)


def looks_like_xml(source):
    """Return True if ``source`` is XML text (as opposed to a path or a mapping)."""
    return isinstance(source, (str, bytes)) and source.lstrip()[:1] in ('<', b'<')
