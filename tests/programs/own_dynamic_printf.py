# cute.printf's formats and the order of prints in a jit function, as a learner tries them.
import cutlass
import cutlass.cute as cute


@cute.jit
def formats(n: cutlass.Int32, x: cutlass.Float32):
    print("tracing with", n, x)
    cute.printf("n=%d x=%f", n, x)
    cute.printf("n={} x={} flag={}", n, x, n > 2)
    cute.printf("padded [%5d] [%-5d] hex %x", n, n, n * 255)
    cute.printf("two decimals %.2f, sci %e", x, x)
    cute.printf("tuple {} layout {}", (n, 8), cute.make_layout((n, 8)))
    cute.printf(n, x, (1, 2))
    print("traced", cute.make_layout((n, 8)))
    cute.printf("100%% done", end="")
    cute.printf(" <- same line")


formats(cutlass.Int32(7), cutlass.Float32(3.14159))
compiled = cute.compile(formats, cutlass.Int32(1), cutlass.Float32(0.5))
print("compiled; calling twice")
compiled(cutlass.Int32(3), cutlass.Float32(1.25))
compiled(cutlass.Int32(4), cutlass.Float32(2.5))
