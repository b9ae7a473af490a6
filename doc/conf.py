"""Sphinx configuration of the transmission_bridge documentation (rosdoc2 layout: doc/)."""

import os
import pathlib
import re
import sys
import xml.etree.ElementTree as ET


def _source_dir():
    """Return this file's folder, also when rosdoc2 runs it from its generated wrapper."""
    here = pathlib.Path(__file__).resolve().parent
    if (here.parent / 'package.xml').is_file():
        return here
    # rosdoc2 copies doc/ next to a wrapper conf.py that exec()s this file by its path.
    named = re.search(r'exec\(open\("(.+?)"\)', pathlib.Path(__file__).read_text())
    return pathlib.Path(named.group(1)).resolve().parent


DOC = _source_dir()
ROOT = DOC.parent
os.environ['TRANSMISSION_BRIDGE_ROOT'] = str(ROOT)      # read by _ext/tb_generated.py
sys.path.insert(0, str(DOC / '_ext'))
sys.path.insert(0, str(ROOT))

_package = ET.parse(ROOT / 'package.xml').getroot()
project = 'transmission_bridge'
author = _package.findtext('maintainer')
copyright = f'{author}, {_package.findtext("license")}'  # noqa: A001 (Sphinx's name)
release = version = _package.findtext('version')

extensions = ['myst_parser', 'sphinx.ext.autodoc', 'sphinx.ext.mathjax', 'tb_generated']
source_suffix = {'.rst': 'restructuredtext', '.md': 'markdown'}
exclude_patterns = ['_build', 'results']
myst_enable_extensions = ['colon_fence', 'dollarmath']
myst_heading_anchors = 3
autodoc_member_order = 'bysource'
autodoc_default_options = {'members': True, 'show-inheritance': True}
# The libraries' docstrings hold doctest examples (run by pytest --doctest-modules).
nitpicky = False
smartquotes = False       # parameter values and commands are shown as typed
html_theme = 'sphinx_rtd_theme'
html_static_path = []
