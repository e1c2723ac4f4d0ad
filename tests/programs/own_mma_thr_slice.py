# Written for cutelab's trial of CuTe DSL programs (issue 8): the kind of program people write while
# learning CuTe DSL. Runs unchanged under CuTe DSL 4.8.1 (CUTE_DSL_ARCH=sm_90a), no GPU needed.
import cutlass
import cutlass.cute as cute


@cute.jit
def thread_slices():
    op = cute.nvgpu.warp.MmaF16BF16Op(cutlass.BFloat16, cutlass.Float32, (16, 8, 8))
    mma = cute.make_tiled_mma(op, (1, 4, 1))
    thr = mma.get_slice(70)
    print(thr)
    gC = cute.make_identity_tensor((16, 64))
    gA = cute.make_identity_tensor((16, 32))
    gB = cute.make_identity_tensor((64, 32))
    print("C:", thr.partition_C(gC))
    print("A:", thr.partition_A(gA))
    print("B:", thr.partition_B(gB))
    sA = cute.make_layout((16, 32), stride=(32, 1))
    print("A shape of thread 70:", thr.partition_A(cute.make_identity_tensor(sA.shape)).shape)
    print("fragment C:", mma.make_fragment_C(thr.partition_C(gC).shape))
    print("fragment A:", mma.make_fragment_A(thr.partition_A(gA).shape))
    print("fragment B:", mma.make_fragment_B(thr.partition_B(gB).shape))
    # a coordinate tensor holds no data: CuTe DSL refuses to make a fragment like it (the program ends here)
    print("fragment of coordinates:", mma.make_fragment_C(thr.partition_C(gC)))


thread_slices()
