# Written for cutelab's trial of CuTe DSL programs (issue 8): the kind of program people write while
# learning CuTe DSL. Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.

import cutlass
import cutlass.cute as cute
from cutlass.utils import print_latex_tv


@cute.jit
def latex_of_a_tv_layout():
    # the LaTeX (TikZ) picture of a 2x4-thread, 2x2-value TV layout
    tiler, tv = cute.make_layout_tv(cute.make_layout((2, 4), stride=(4, 1)), cute.make_layout((2, 2), stride=(2, 1)))
    print(tiler, tv)
    print_latex_tv(tv, tiler)


latex_of_a_tv_layout()
