"""Figures as one self-contained HTML page: the SVG inline, then the print_layout text.

No scripts, no external files: the page can be mailed or attached to an issue as it is.
"""

from __future__ import annotations

from html import escape

from . import svg, text
from .figure import Figure

__all__ = ["render"]

_STYLE = """body{font-family:system-ui,sans-serif;margin:1.5em;color:#111}
h1{font-size:1.2em}pre{font-family:DejaVu Sans Mono,Menlo,Consolas,monospace;font-size:12px;
background:#f6f6f6;padding:1em;overflow:auto}.pic{overflow:auto;border:1px solid #ddd}"""


def render(fig: Figure) -> str:
    """The figure as an HTML document (a string)."""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{escape(fig.title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
        f"<h1>{escape(fig.title)}</h1>\n<div class=\"pic\">\n{svg.render(fig)}</div>\n"
        f"<h2>As text</h2>\n<pre>{escape(text.render(fig))}</pre>\n</body>\n</html>\n"
    )
