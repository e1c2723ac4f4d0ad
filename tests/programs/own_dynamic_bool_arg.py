# Written for cutelab's trial of CuTe DSL programs (issue 9): a cutlass.Boolean argument of a @cute.jit
# function is a runtime value, as Int32 and Float32 arguments are: print shows '?' while tracing, printf
# its value at each call. Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.
import cutlass
import cutlass.cute as cute


@cute.jit
def show(flag: cutlass.Boolean, n: cutlass.Int32):
    print("trace:", flag, n)
    cute.printf("flag={} n={}", flag, n)


f = cute.compile(show, cutlass.Boolean(True), cutlass.Int32(1))
f(cutlass.Boolean(True), cutlass.Int32(1))
f(cutlass.Boolean(False), cutlass.Int32(2))
