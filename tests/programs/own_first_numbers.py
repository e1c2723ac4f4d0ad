# Written for cutelab's trial of CuTe DSL programs (issue 9): the first things a newcomer tries: numeric types on the host.
# Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.

import cutlass
import cutlass.cute as cute

print(cutlass.Float32, cutlass.Float16, cutlass.BFloat16, cutlass.Int8, cutlass.Uint8, cutlass.Boolean)
print(cutlass.Float32.width, cutlass.Float16.width, cutlass.BFloat16.width, cutlass.Int64.width)
print(cutlass.Int32.is_integer if hasattr(cutlass.Int32, "is_integer") else "-")
print(cutlass.Float32.is_integer() if callable(getattr(cutlass.Float32, "is_integer", None)) else "-")
print(cutlass.Int32.signed, cutlass.Uint32.signed)
print(cutlass.Float32 is cutlass.Float32, cutlass.Float32 == cutlass.Float16)
print(cutlass.Float8E4M3FN, cutlass.Float8E5M2, cutlass.TFloat32, cutlass.Float64, cutlass.Int64, cutlass.Uint64)
