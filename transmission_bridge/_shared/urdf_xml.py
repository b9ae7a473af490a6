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


def parse(text, error, notes=None):
    """
    Return the root element of XML ``text``; raise ``error`` with the reason if refused.

    White space before the XML declaration (which XML forbids, and which files written by
    templates often have) is dropped, with a note in ``notes`` (a :class:`Notes`) if given.
    """
    if isinstance(text, bytes):
        text = text.decode('utf-8', errors='replace')
    if not isinstance(text, str) or not text.strip():
        raise error('robot description is empty')
    if text[:1].isspace() and text.lstrip().startswith('<?xml'):
        text = text.lstrip()
        if notes is not None:
            notes.add('white space before the XML declaration: ignored')
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


class Notes:
    """
    What a loader accepted but had to assume: one sentence per finding.

    Unknown elements and attributes are gathered per tag and listed once with how many
    owners have them, so a file with a ``<contact>`` in 40 links gives one line.

    >>> notes = Notes()
    >>> notes.unknown('link', 'foot', 'contact')
    >>> notes.unknown('link', 'hand', 'contact')
    >>> notes.add("joint 'j': lower > upper; assumed unlimited")
    >>> for line in notes.lines():
    ...     print(line)
    joint 'j': lower > upper; assumed unlimited
    ignored unknown element <contact> in 2 links (link 'foot', link 'hand')
    """

    SHOWN = 3          # owners named per unknown tag

    def __init__(self):
        self._lines = []
        self._unknown = {}

    def add(self, line):
        """Record one finding."""
        if line not in self._lines:
            self._lines.append(line)

    def unknown(self, kind, owner, tag, attribute=False):
        """Record that ``kind`` ``owner`` has an element (or attribute) ``tag`` not understood."""
        self._unknown.setdefault((kind, tag, attribute), []).append(owner)

    def check_children(self, element, known, kind, owner):
        """Record the children of ``element`` whose tag is not in ``known``."""
        for child in element:
            if isinstance(child.tag, str) and child.tag not in known:
                self.unknown(kind, owner, child.tag)

    def check_attributes(self, element, known, kind, owner):
        """Record the attributes of ``element`` that are not in ``known``."""
        for attribute in element.attrib:
            if attribute not in known:
                self.unknown(kind, owner, attribute, attribute=True)

    def lines(self):
        """Return every finding, unknown tags last, each once."""
        out = list(self._lines)
        for (kind, tag, attribute), owners in self._unknown.items():
            what = f'attribute {tag}=' if attribute else f'element <{tag}>'
            named = ', '.join(f'{kind} {o!r}' for o in owners[:self.SHOWN])
            more = f', and {len(owners) - self.SHOWN} more' if len(owners) > self.SHOWN else ''
            plural = kind + ('es' if kind.endswith('s') else 's')
            count = f'{len(owners)} {plural}' if len(owners) > 1 else f'{kind} {owners[0]!r}'
            out.append(f'ignored unknown {what} in {count}'
                       + (f' ({named}{more})' if len(owners) > 1 else ''))
        return out
