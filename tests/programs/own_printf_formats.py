# Written for cutelab's trial of CuTe DSL programs (issue 9): cute.printf and print inside a compiled
# @cute.jit function with the format specs and values a learner tries (ints, floats, bools, layouts,
# shapes, tensor elements, Python and dynamic values side by side), called twice.
# Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.
import numpy as np

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack


@cute.jit
def fmt(t: cute.Tensor, n: cutlass.Int32, x: cutlass.Float32, flag: cutlass.Boolean):
    print("trace:", n, x, t.shape, t.element_type)
    cute.printf("n={} x={} flag={}", n, x, flag)
    cute.printf("n*2={} n+x={} x/2={}", n * 2, n + x, x / 2)
    cute.printf("t[1]={} t[n]={}", t[1], t[n])
    cute.printf("shape {} layout {}", t.shape, t.layout)
    cute.printf("%d items, first %f", cute.size(t), t[0])
    cute.printf("mixed {} {} {}", 7, 2.5, n)


a = np.linspace(0.0, 1.0, 6).astype(np.float32)
f = cute.compile(fmt, from_dlpack(a), cutlass.Int32(2), cutlass.Float32(1.5), cutlass.Boolean(True))
f(from_dlpack(a), cutlass.Int32(2), cutlass.Float32(1.5), cutlass.Boolean(True))
f(from_dlpack(a), cutlass.Int32(4), cutlass.Float32(-0.25), cutlass.Boolean(False))
