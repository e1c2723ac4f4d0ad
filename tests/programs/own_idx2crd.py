# Written for cutelab's trial of CuTe DSL programs (issue 9): walking a layout by index and by coordinate
# (idx2crd, crd2idx, calling a layout with an int or a coordinate) in Python loops while tracing.
# Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.
import cutlass
import cutlass.cute as cute


def walk(layout):
    print("layout", layout)
    for m in range(cute.size(layout, mode=[0])):
        row = []
        for n in range(cute.size(layout, mode=[1])):
            row.append(str(layout((m, n))))
        print(" ".join(row))
    for i in range(cute.size(layout)):
        print(i, cute.idx2crd(i, layout.shape), layout(i), cute.crd2idx(i, layout),
              cute.crd2idx(cute.idx2crd(i, layout.shape), layout))
    for i in range(cute.size(layout)):
        cute.printf("i={} crd={}", i, cute.idx2crd(i, layout.shape))


@cute.jit
def main():
    walk(cute.make_layout((2, (2, 2)), stride=(4, (2, 1))))
    walk(cute.make_ordered_layout((3, 4), order=(1, 0)))


main()
