"""The web playground: ``cutelab serve`` (or ``python -m cutelab serve``).

A local page, opened in the browser, with a tab per picture (a layout, each algebra
operation, TV layouts, the three partitions). Type CuTe notation and the picture follows;
hover a cell for its index, coordinate, offset, thread and value; click a thread to light up
all its values; zoom and pan; the address bar always holds a link to the current state.

The server is the standard library's threading HTTP server bound to 127.0.0.1 (server.py);
the tabs are small declarations (tabs.py); the page is static JS/CSS shipped in static/.
Pictures are computed by cutelab.render and drawn by its SVG and HTML back ends.

``cutelab site DIR`` (site.py) writes the same page as a static site in which Pyodide runs
cutelab in the browser: static/site.js answers the page's /api/ requests with ``server.api``.

May import: ``cutelab``'s core, the atoms, ``render``, ``analysis`` and ``commands`` (the tabs build
their pictures through the command line's figure commands). Never ``cli``, which imports it.
"""

from .server import DEFAULT_PORT, figure_json, make_server, serve, url_of
from .tabs import MAX_CELLS, TABS, Field, Tab, compute, tab, tabs_json
from .tabs import _has_atom_pictures

if _has_atom_pictures():  # the Blackwell tabs register themselves with tabs.tab
    from . import tabs_sm100  # noqa: F401

__all__ = ["serve", "make_server", "url_of", "figure_json", "DEFAULT_PORT",
           "TABS", "Tab", "Field", "tab", "compute", "tabs_json", "MAX_CELLS"]
