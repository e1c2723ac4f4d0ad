"""cute.viz, as CuTe DSL names it: LaTeX (TikZ) pictures of layouts (see cutelab.utils.print_latex).

>>> import cutelab as cute
>>> cute.viz.print_latex_tv is cute.utils.print_latex_tv
True
"""

from .utils.print_latex import (  # noqa: F401
    PALETTES, Band, print_latex, print_latex_tv, tikz_color_bwx8, tikz_color_rainbow, tikz_color_tv,
    tikz_color_white, tikz_escape,
)

__all__ = ["print_latex", "print_latex_tv", "PALETTES", "Band", "tikz_color_bwx8", "tikz_color_white",
           "tikz_color_tv", "tikz_color_rainbow", "tikz_escape"]
