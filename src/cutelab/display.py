"""What Jupyter shows for cutelab's values: the protocol between the values that have a picture
(layouts, composed layouts, tensors, MMA and copy atoms: their ``_repr_html_`` and ``_repr_svg_``)
and the pictures (``cutelab.render``), which sit above them and which they do not import.

``html(x)`` and ``svg(x)`` answer x's picture, or None (IPython then shows the text). The package
(``cutelab/__init__.py``) installs ``cutelab.render.notebook``'s, loaded on first use; until then
there is no picture. This module imports nothing of cutelab.

>>> import cutelab as cute
>>> "<svg" in svg(cute.make_layout((2, 2)))
True
"""

from __future__ import annotations

from typing import Any, Callable, Optional

__all__ = ["html", "svg", "install"]

_html: Optional[Callable[[Any], Optional[str]]] = None
_svg: Optional[Callable[[Any], Optional[str]]] = None


def html(x: Any) -> Optional[str]:
    """x's picture as an interactive HTML fragment, or None."""
    return _html(x) if _html is not None else None


def svg(x: Any) -> Optional[str]:
    """x's picture as SVG, or None."""
    return _svg(x) if _svg is not None else None


def install(html: Callable[[Any], Optional[str]], svg: Callable[[Any], Optional[str]]) -> None:
    """Install the pictures' implementations (the package does, once)."""
    global _html, _svg
    _html, _svg = html, svg
