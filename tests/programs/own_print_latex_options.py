# Written for cutelab's trial of CuTe DSL programs (issue 9): the LaTeX pictures of cute.viz with
# their options: a swizzled layout, a colour function, palettes, a title, axis labels and render_func.
# Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.

import cutlass
import cutlass.cute as cute
from cutlass.cute.viz import print_latex, print_latex_tv, tikz_color_white


@cute.jit
def pictures():
    sw = cute.make_composed_layout(cute.make_swizzle(1, 0, 1), 0, cute.make_layout((2, 4), stride=(4, 1)))
    print_latex(sw)
    print_latex(cute.make_layout((2, 3), stride=(3, 1)), color=tikz_color_white)
    tiler, tv = cute.make_layout_tv(cute.make_layout((2, 2), stride=(2, 1)), cute.make_layout((1, 2), stride=(2, 1)))
    print_latex_tv(tv, tiler, palette="rainbow_dual", title="tv_layout\nof 4 threads", axis_labels=True)
    print_latex_tv(tv, tiler, palette="bw_dual")
    print_latex_tv(tv, cute.make_layout(tiler), palette="rainbow", render_func=lambda s: print("RENDERED", len(s), s[:60]))


pictures()
