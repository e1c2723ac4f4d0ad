# Written for cutelab's trial of CuTe DSL programs (issue 9): layouts with runtime sizes: what print shows
# while tracing and what printf shows when the compiled function runs, called with two values.
# Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.
import cutlass
import cutlass.cute as cute


@cute.jit
def show(n: cutlass.Int32, m: cutlass.Constexpr[int]):
    s8 = cute.make_layout(8)
    d = cute.make_layout(n)
    mixed = cute.make_layout((2, n), stride=(n, 1))
    col = cute.make_layout((m, n))
    print("static", s8, "dynamic", d, mixed, col)
    cute.printf("s8 {} d {} mixed {} col {}", s8, d, mixed, col)
    cute.printf("size {} cosize {} n+m {}", cute.size(col), cute.cosize(mixed), n + m)
    print("size", cute.size(col), "shape", col.shape, "stride", col.stride)


f = cute.compile(show, cutlass.Int32(4), 3)
f(cutlass.Int32(4))
f(cutlass.Int32(6))
show(cutlass.Int32(5), 2)
