"""tcgen05 refusals that the golden vectors do not reach: each names the operation, the operand and
the failed condition."""

import numpy as np
import pytest

import cutelab as cute
from cutelab.errors import LayoutError, TensorError, TraceError
from cutelab.nvgpu import OperandMajorMode, tcgen05
from cutelab.swizzle import make_composed_layout, make_swizzle

K = OperandMajorMode.K


def _mma(src=tcgen05.OperandSource.SMEM, m=128, n=128, cta=tcgen05.CtaGroup.ONE):
    return cute.make_tiled_mma(tcgen05.MmaF16BF16Op(cute.Float16, cute.Float32, (m, n), cta, src, K, K))


def test_fragment_c_needs_rank_3_and_the_atoms_value_mode():
    mma = _mma()
    with pytest.raises(TensorError, match=r"make_fragment_C\(\(\(128,128\),2\)\): expected input tensor to have the "
                                          r"profile \(MMA,MMA_MN,MMA_K,...\) with at least 3 modes"):
        mma.make_fragment_C(((128, 128), 2))
    with pytest.raises(TensorError, match=r"expects size of atom val mode and fragment val mode is equal, but got "
                                          r"atomVal \(128,128\) frgValMode \(128,64\)"):
        mma.make_fragment_C(((128, 64), 1, 1))


def test_smem_operands_need_a_partitioned_smem_tensor():
    mma = _mma()
    with pytest.raises(TensorError, match=r"make_fragment_B: MmaF16BF16Op reads B from shared memory through "
                                          r"descriptors: pass the partitioned shared-memory tensor"):
        mma.make_fragment_B(mma.partition_shape_B((128, 64)))
    rmem = cute.make_tensor(np.zeros(128 * 64, np.float16), cute.make_layout((128, 64), stride=(64, 1)))
    with pytest.raises(TensorError, match="reads A from shared memory, but the tensor is in generic"):
        mma.make_fragment_A(mma.get_slice(0).partition_A(rmem))
    ptr = cute.make_ptr(cute.Float16, 0, cute.AddressSpace.smem, assumed_align=1024)
    sw = cute.make_tensor(ptr, make_composed_layout(make_swizzle(3, 4, 3), 0, cute.make_layout((128, 64), stride=(64, 1))))
    with pytest.raises(TensorError, match=r"Expected affine layout for MmaF16BF16Op's operand A, but got composed layout"):
        mma.make_fragment_A(mma.get_slice(0).partition_A(sw))


def test_smem_descriptor_steps_whole_16_byte_units():
    mma = _mma()
    ptr = cute.make_ptr(cute.Float16, 0, cute.AddressSpace.smem, assumed_align=1024)
    ok = cute.make_tensor(ptr, cute.make_layout(((128, 16), 1, 2), stride=((16, 1), 0, 2048)))
    assert str(mma.make_fragment_A(ok).layout) == "(1,1,2):(0,0,256)"
    odd = cute.make_tensor(ptr, cute.make_layout(((128, 16), 1, 2), stride=((16, 1), 0, 2052)))  # 4104 bytes
    with pytest.raises(TensorError, match=r"the stride 2052 of a rest mode is not a multiple of 16 bytes"):
        mma.make_fragment_A(odd)


def test_tmem_tensors_have_no_host_data():
    mma = _mma()
    acc = mma.make_fragment_C(mma.partition_shape_C((128, 128)))
    with pytest.raises(TensorError, match="a tensor-memory tensor has no host data"):
        acc.load()


def test_tmem_copy_needs_a_tmem_tensor_of_the_atoms_width():
    mma = _mma()
    acc = mma.make_fragment_C(mma.partition_shape_C((128, 128)))[((None, None), 0, 0)]
    ld = tcgen05.Ld32x32bOp(tcgen05.Repetition.x8)
    with pytest.raises(TensorError, match="expected a tensor-memory tensor"):
        tcgen05.make_tmem_copy(cute.make_copy_atom(ld, cute.Float32), cute.make_identity_tensor((128, 128)))
    with pytest.raises(TensorError, match=r"the atom moves 16-bit values but the TMEM tensor holds Float32 \(32 bits\)"):
        tcgen05.make_tmem_copy(cute.make_copy_atom(ld, cute.Float16), acc)
    narrow = cute.flat_divide(acc, (128, 4))[(None, None, 0, 0)]  # 4 columns; x8 reads 8
    with pytest.raises(TensorError, match=r"expects the memory pointed to by atom tv layout exists in the data layout"):
        tcgen05.make_tmem_copy(cute.make_copy_atom(ld, cute.Float32), narrow)


def test_tmem_ops_refuse_repetitions_past_their_width():
    with pytest.raises(ValueError, match=r"Ld16x256bOp\(Repetition.x64\): x64 and x128 repetition is not supported"):
        tcgen05.Ld16x256bOp(tcgen05.Repetition.x64)
    with pytest.raises(ValueError, match="expects the 'pack' Op parameter to be a tcgen05.Pack instance"):
        tcgen05.Ld32x32bOp(tcgen05.Repetition.x1, tcgen05.Unpack.NONE)


def test_tmem_a_must_be_k_major_and_names_not_modelled_say_so():
    op = tcgen05.MmaF16BF16Op(cute.Float16, cute.Float32, (128, 64), tcgen05.CtaGroup.ONE, tcgen05.OperandSource.TMEM,
                              OperandMajorMode.MN, K)
    with pytest.raises(LayoutError, match="a operand must be of major-mode k when coming from tmem"):
        cute.make_mma_atom(op)
    # a name cutelab lacks imports (libraries list such ops in module-level isinstance tuples); using it raises
    assert isinstance(tcgen05.LdRed32x32bOp, type) and tcgen05.LdRed32x32bOp is tcgen05.LdRed32x32bOp
    with pytest.raises(TraceError, match=r"cute.nvgpu.tcgen05.make_umma_smem_desc \(CuTe DSL 4.8.1\) is not in cutelab yet"
                                         r" \(used at .*test_tcgen05_errors.py:\d+\)"):
        tcgen05.make_umma_smem_desc(None, None)


def test_odd_interleaved_64_row_fragment_is_refused_with_the_reason():
    mma = _mma(m=64, n=64)
    with pytest.raises(TensorError, match=r"must begin with an even count \(CuTe DSL 4.8.1 prints this fragment with "
                                          r"unknown 'x' extents\)"):
        mma.make_fragment_C(mma.partition_shape_C((192, 64)))
    assert str(mma.make_fragment_C(mma.partition_shape_C((128, 64)))) == \
        "tensor<ptr<f32, tmem, align<1>> o (((16,4),64),2,1):(((65536,2097152),1),1048576,0)>"
