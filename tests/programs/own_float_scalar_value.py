# Written for cutelab's trial of CuTe DSL programs (issue 9): the value a float scalar type keeps on the
# host. Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.
import cutlass

x = cutlass.Float32(0.1)
print(x.value, x.value == 0.1)
print(cutlass.Float16(65519.0).value, cutlass.BFloat16(1.00390625).value)
print(cutlass.Int32(7) + 1, cutlass.Float32(1.0) * 2)
