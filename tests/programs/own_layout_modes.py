# Written for cutelab's trial of CuTe DSL programs (issue 9): taking layouts apart and putting them back together
# (get, select, append, prepend, group_modes, flatten) with printf inside a @cute.jit function.
# Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.
import cutlass
import cutlass.cute as cute


@cute.jit
def modes():
    a = cute.make_ordered_layout((4, (3, 6)), (0, (1, 2)))
    cute.printf("a {} a0 {} a1 {} a10 {} a11 {}", a, cute.get(a, mode=[0]), cute.get(a, mode=[1]),
                cute.get(a, mode=[1, 0]), cute.get(a, mode=[1, 1]))
    b = cute.make_ordered_layout((2, 3, 5, 7), (0, 1, 2, 3))
    print("b", b, "select [1,3]", cute.select(b, mode=[1, 3]), "select [2]", cute.select(b, mode=[2]))
    x = cute.make_layout(3, stride=1)
    y = cute.make_layout(4, stride=3)
    xy = cute.append(x, y)
    yx = cute.prepend(x, y)
    print("append", xy, "prepend", yx, "nested", cute.append(xy, xy))
    g = cute.group_modes(b, 0, 2)
    gg = cute.group_modes(g, 1, 3)
    print("grouped", g, gg, "flat", cute.flatten(gg))
    print("rank", cute.rank(gg), "depth", cute.depth(gg), "size", cute.size(gg), "cosize", cute.cosize(gg))
    t = ((1, 2), (3, 4))
    cute.printf("t rank {} depth {} size {} get0 {}", cute.rank(t), cute.depth(t), cute.size(t), cute.get(t, mode=[0]))
    print(cute.size(b, mode=[1]), cute.shape(b), cute.make_layout(cute.shape(b)))


modes()
