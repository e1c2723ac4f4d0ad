# Static and dynamic integers in a jit function: what print shows, what printf shows.
import cutlass
import cutlass.cute as cute


@cute.jit
def values(a: cutlass.Int32, b: cutlass.Constexpr[int]):
    c = cutlass.Int32(10)
    print("a:", a, "b:", b, "c:", c)
    print("a*b:", a * b, "a+c:", a + c, "b*3:", b * 3)
    print("types:", type(a), type(b), type(c))
    L = cute.make_layout((a, b, 4))
    print("layout:", L, "size:", cute.size(L), "cosize:", cute.cosize(L))
    print("coalesce:", cute.coalesce(L))
    print("composition:", cute.composition(L, cute.make_layout(2, stride=2)))
    cute.printf("runtime a={} b={} c={} L={} size={}", a, b, c, L, cute.size(L))


values(cutlass.Int32(6), 2)
values(cutlass.Int32(3), 5)
