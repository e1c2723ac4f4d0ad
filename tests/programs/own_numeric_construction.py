# Written for cutelab's trial of CuTe DSL programs (issue 9): what a newcomer checks about cutlass's
# scalar types on the host: wrap-around to the bit width, truncation of floats, Boolean folding,
# conversions between types, the types' names, and the errors for values that have no integer.
# Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.
import math

import cutlass
from cutlass import Boolean, Int8, Int16, Int32, Int64, Uint8, Uint16, Uint32, Uint64, Float32

for ty in (Int8, Uint8, Int16, Uint16, Int32, Uint32, Int64, Uint64, Boolean):
    vals = [ty(x).value for x in (0, 1, -1, 127, 128, 255, 256, -129, 2**31, 2**32 + 5)]
    print(ty.__name__, vals)

print("floats truncate:", Int32(3.7).value, Int32(-3.7).value, Int32(0.5).value, Int8(99.9).value)
print("bools:", Int32(True).value, Uint8(False).value, Boolean(0).value, Boolean(-1).value, Boolean(3.7).value)
print("from other types:", Int64(Int32(5)).value, Int8(Int32(300)).value, Int32(Int8(-1)).value,
      Int32(Float32(5.7)).value, Int32(Float32(-5.7)).value)
print("same type:", Int32(Int32(5)).value, Uint8(Uint8(200)).value)
print("Boolean of nan/inf:", Boolean(math.nan).value, Boolean(math.inf).value)

for ty in (Int8, Int32, Uint64):
    for bad in (math.nan, math.inf, -math.inf):
        try:
            ty(bad)
            print(ty.__name__, bad, "accepted")
        except (ValueError, OverflowError) as e:
            print(ty.__name__, bad, "->", type(e).__name__)

a = Int32(7)
print(a.value, Int32(2**31 - 1).value + 0, a.value + 1)
