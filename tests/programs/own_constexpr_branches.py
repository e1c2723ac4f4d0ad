# Written for cutelab's trial of CuTe DSL programs (issue 9): compile-time arguments and branches:
# Constexpr parameters, cutlass.const_expr, Python loops unrolled while tracing, helpers called from
# a @cute.jit function, and the same function compiled for two configurations.
# Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.
import cutlass
import cutlass.cute as cute


def tile_for(kind):
    return (16, 8) if kind == "wide" else (8, 8)


@cute.jit
def configure(kind: cutlass.Constexpr[str], stages: cutlass.Constexpr[int], n: cutlass.Int32):
    tile = tile_for(kind)
    if cutlass.const_expr(kind == "wide"):
        layout = cute.make_layout(tile, stride=(tile[1], 1))
    else:
        layout = cute.make_layout(tile)
    print(kind, "tile", tile, "layout", layout)
    staged = cute.make_layout((tile[0], tile[1], stages))
    print("staged", staged, "stage size", cute.size(staged, mode=[0, 1]) if False else cute.size(cute.select(staged, mode=[0, 1])))
    for s in range(stages):
        print("stage", s, "offset", staged((0, 0, s)))
    for s in cutlass.range_constexpr(stages):
        cute.printf("stage {} of {} (n={})", s, stages, n)
    if cutlass.const_expr(stages > 2):
        cute.printf("deep pipeline")


configure("wide", 3, cutlass.Int32(7))
configure("square", 2, cutlass.Int32(9))
f = cute.compile(configure, "wide", 1, cutlass.Int32(0))
f(cutlass.Int32(11))
