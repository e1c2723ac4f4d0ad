"""The DSL-internal module tree that libraries import, through `cutelab run`."""
from compat_helpers import ok, run


def test_internal_modules_import_and_work(tmp_path):
    out = ok(run(tmp_path, """
        import dataclasses
        import cutlass
        import cutlass.cute as cute
        from cutlass.cutlass_dsl import (dsl_user_op, T, NumericMeta, if_generate, and_, target_version,
                                         extract_mlir_values, new_from_mlir_values, JitCompiledFunction)
        from cutlass.base_dsl import Arch
        from cutlass.base_dsl.arch import Arch as Arch2
        from cutlass.base_dsl.typing import Numeric, Int32
        import cutlass.base_dsl as base_dsl
        from cutlass.cute.typing import Tensor, Layout, Shape
        from cutlass.cute.tensor import TensorSSA
        from cutlass.cute.core import make_layout
        import cutlass.cute.atom

        @dataclasses.dataclass
        class Params:
            a: int
            b: tuple
            mode: int = 7  # a Python int is a compile-time constant: no value (as in CuTe DSL)
        p = Params(Int32(1), (Int32(2), Int32(3)))
        vals = extract_mlir_values(p)
        print(vals, new_from_mlir_values(p, [Int32(4), Int32(5), Int32(6)]))
        print(isinstance(cutlass.Float32, NumericMeta), T.f32() is cutlass.Float32, target_version(min_version="12.0"))
        print(Arch is Arch2, base_dsl.get_arch_enum(), Arch.sm_90a >= Arch.sm_80, Int32 is cutlass.Int32)
        print(Tensor is cute.Tensor, make_layout((2, 4)), cutlass.CUDA_VERSION, cutlass.select_(True, 3, 4))
        print(cute.assume(64, divby=16), cute.arch.WARP_SIZE, cute.math.erf(0.5) > 0.52, cute.math.fma(2, 3, 4))
        print(if_generate(True, lambda: None), if_generate(False, lambda: 3, lambda: 4, return_types=[cutlass.Int32]))
    """))
    assert out.splitlines() == [
        "[1, 2, 3] Params(a=4, b=(5, 6), mode=7)",
        "True True True",
        "True sm_90a True True",
        "True (2,4):(1,2) 12.9 3",
        "64 32 True 10",
        "[] 4",
    ]


def test_cutlass_utils_and_torch_helpers(tmp_path):
    out = ok(run(tmp_path, """
        import torch
        import cutlass
        import cutlass.utils as utils
        import cutlass.torch as cutlass_torch
        import cutlass.cute as cute
        from cutlass.cute.testing import CantImplementError, convert, autotune_jit

        hw = utils.HardwareInfo()
        print(hw.get_device_multiprocessor_count(), hw.get_max_active_clusters(2), hw.get_l2_cache_size_in_bytes() >> 20)
        p = utils.PersistentTileSchedulerParams((4, 3, 2), (2, 1, 1))
        grid = utils.StaticPersistentTileScheduler.get_grid_shape(p, max_active_clusters=5)
        seen = []
        for bz in range(grid[2]):
            for bx in range(grid[0]):
                s = utils.StaticPersistentTileScheduler.create(p, (bx, 0, bz), grid)
                w = s.initial_work_tile_info()
                while w.is_valid_tile:
                    seen.append(w.tile_idx)
                    s.advance_to_next_work()
                    w = s.get_current_work()
        print(grid, len(seen), len(set(seen)), sorted(seen)[:3])
        print(divmod(23, utils.FastDivmodDivisor(7)))
        t = cutlass_torch.create_and_permute_torch_tensor((2, 3, 4), torch.float16, permute_order=(2, 1, 0),
            init_type=cutlass_torch.TensorInitType.RANDOM, init_config=cutlass_torch.RandomInitConfig(min_val=0, max_val=3),
            device="cuda")
        print(tuple(t.shape), t.dtype, t.is_cuda, bool(((t >= 0) & (t < 3)).all()))
        ct, tt = cutlass_torch.cute_tensor_like(t, cutlass.Float32, is_dynamic_layout=True, assumed_align=16)
        print(ct.element_type, torch.equal(tt, t.float()), int(cutlass_torch.default_stream()))
        host = torch.arange(6, dtype=torch.float32).reshape(2, 3)  # a host tensor: the copy is on the GPU
        ct, tt = cutlass_torch.cute_tensor_like(host, cutlass.Float16, is_dynamic_layout=True)
        print(tt.is_cuda, tt.dtype, tt.cpu().tolist())
        print(issubclass(CantImplementError, Exception))
        m = utils.TensorMapManager(utils.TensorMapUpdateMode.SMEM, 128)  # descriptors in memory (compat/dsl_tensormap.py)
        print(m.tensormap_update_mode.name, m.bytes_per_tensormap)
    """))
    assert out.splitlines() == [
        "132 66 50",
        "(2, 1, 5) 24 24 [(0, 0, 0), (0, 0, 1), (0, 1, 0)]",
        "(3, 2)",
        "(4, 3, 2) torch.float16 True True",
        "Float32 True 0",
        "True torch.float16 [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]",
        "True",
        "SMEM 128",
    ]


def test_cute_math_in_a_kernel(tmp_path):
    out = ok(run(tmp_path, """
        import torch
        import cutlass
        import cutlass.cute as cute
        from cutlass.cute.runtime import from_dlpack

        @cute.kernel
        def k(gA: cute.Tensor, gB: cute.Tensor):
            tidx, _, _ = cute.arch.thread_idx()
            v = gA[tidx]
            p0, p1 = cute.arch.fma_packed_f32x2((v, v), (v, 2.0), (1.0, v))
            gB[tidx] = cute.math.erf(v) + cute.math.ceil(v) + cute.math.fma(v, v, cute.math.abs(v)) + p0 - p1

        @cute.jit
        def f(a: cute.Tensor, b: cute.Tensor):
            k(a, b).launch(grid=(1, 1, 1), block=(16, 1, 1))

        a = torch.randn(16, device="cuda"); b = torch.zeros(16, device="cuda")
        f(from_dlpack(a), from_dlpack(b))
        print(torch.allclose(b, torch.erf(a) + torch.ceil(a) + a * a + a.abs() + (a * a + 1) - 3 * a, atol=1e-5))
    """))
    assert out.strip() == "True"


def test_programmatic_dependent_launch_runs_in_stream_order(tmp_path):
    out = ok(run(tmp_path, """
        import torch
        import cutlass
        import cutlass.cute as cute
        from cutlass.cute.runtime import from_dlpack

        @cute.kernel
        def k(gA: cute.Tensor, gB: cute.Tensor):
            cute.arch.griddepcontrol_wait()
            tidx, _, _ = cute.arch.thread_idx()
            gB[tidx] = gA[tidx] * 2.0
            cute.arch.griddepcontrol_launch_dependents()

        @cute.jit
        def f(a: cute.Tensor, b: cute.Tensor, c: cute.Tensor):
            k(a, b).launch(grid=(1, 1, 1), block=(16, 1, 1), use_pdl=True)
            k(b, c).launch(grid=(1, 1, 1), block=(16, 1, 1), use_pdl=True, cooperative=False)

        a = torch.randn(16, device="cuda"); b = torch.zeros(16, device="cuda"); c = torch.zeros(16, device="cuda")
        f(from_dlpack(a), from_dlpack(b), from_dlpack(c))
        print(torch.equal(c, 4 * a))
        try:
            k(from_dlpack(a), from_dlpack(b)).launch(grid=(1, 1, 1), block=(16, 1, 1), no_such_option=1)
        except Exception as e:
            print(type(e).__name__, "no_such_option" in str(e))
    """))
    assert out.splitlines() == ["True", "LaunchError True"]


def test_blackwell_tcgen05_names_through_the_hook(tmp_path):
    # the SM100 atoms and helpers as CuTe DSL programs import them (issue 20); algebra only. The expected
    # lines are what CuTe DSL 4.8.1 prints for this program with CUTE_DSL_ARCH=sm_100a
    out = ok(run(tmp_path, """
        import cutlass
        import cutlass.cute as cute
        from cutlass.cute.nvgpu import tcgen05, OperandMajorMode
        import cutlass.utils.blackwell_helpers as sm100_utils

        mma = sm100_utils.make_trivial_tiled_mma(cutlass.BFloat16, cutlass.BFloat16, OperandMajorMode.K,
                                                 OperandMajorMode.K, cutlass.Float32, tcgen05.CtaGroup.TWO, (256, 128))
        print(mma.thr_layout_vmnk, mma.tv_layout_A)
        print(sm100_utils.make_smem_layout_b(mma, (256, 128, 64), cutlass.BFloat16, 4))
        acc = mma.make_fragment_C(mma.partition_shape_C((256, 128)))
        print(acc)
        atom = cute.make_copy_atom(tcgen05.Ld32x32bOp(tcgen05.Repetition.x32), cutlass.Float32)
        print(tcgen05.make_tmem_copy(atom, acc[((None, None), 0, 0)]).tiler_mn)
        print(cute.nvgpu.tcgen05.SmemLayoutAtomKind.MN_SW128_32B, cutlass.Float4E2M1FN.width)
    """))
    assert out.splitlines() == [
        "(2,1,1,1):(1,0,0,0) (2,(128,16)):(128,(1,256))",
        "S<3,4,3> o 0 o ((64,16),1,4,4):((64,1),0,16,4096)",
        "tensor<ptr<f32, tmem, align<1>> o ((128,128),1,1):((65536,1),0,0)>",
        "((4,32):(32,1), 32:1)",
        "SmemLayoutAtomKind.MN_SW128_32B 4",
    ]


def test_names_cutlass_hopper_examples_import(tmp_path):
    """What CUTLASS's Hopper FMHA and grouped GEMM import at their top (and their helpers): each resolves,
    and a class cutelab does not provide can be subclassed; making one names it and the line."""
    out = ok(run(tmp_path, """
        import inspect
        import cutlass
        import cutlass.cute as cute
        import cutlass.utils as utils
        from cutlass.cutlass_dsl import min, max
        from cutlass.utils.hardware_info import HardwareInfo
        from cutlass._mlir._mlir_libs._cutlass_ir._mlir.ir import IntegerType
        from cutlass._mlir.dialects import nvvm

        print(min is cutlass.min, max is cutlass.max, HardwareInfo is utils.HardwareInfo)
        print("res" in inspect.signature(nvvm.mbarrier_try_wait_parity_timelimit).parameters)
        print(cute.erf is cute.math.erf, [m.name for m in utils.TensorMapUpdateMode])

        class Mine(utils.SmemPartition):  # a class not in cutelab yet: subclassing works, making one is refused
            pass
        try:
            Mine()
        except NotImplementedError as e:
            print(str(e).split(" (used at")[0], "prog.py:" in str(e))
    """))
    assert out.splitlines() == ["True True True", "False", "True ['GMEM', 'SMEM']",
                                "cutlass.utils.SmemPartition (CuTe DSL 4.8.1) is not in cutelab yet True"]


def test_dsl_names_of_cutlass_hopper_fmha_in_a_kernel(tmp_path):
    """cute.arch.warp_reduction_max/_sum (butterfly shuffles), the MLIR math dialect's log of a scalar, a Tensor's
    _dtype, and cute functions called with loc=/ip= (as CuTe DSL's helpers pass them through)."""
    out = ok(run(tmp_path, """
        import math
        import torch
        import cutlass
        import cutlass.cute as cute
        from cutlass._mlir.dialects import math as _math
        from cutlass.cute.runtime import from_dlpack

        @cute.kernel
        def k(x: cute.Tensor, mx: cute.Tensor, sm: cute.Tensor, lg: cute.Tensor):
            tidx, _, _ = cute.arch.thread_idx()
            v = x[tidx]
            mx[tidx] = cute.arch.warp_reduction_max(v, threads_in_group=8)
            sm[tidx] = cute.arch.warp_reduction_sum(v)
            lg[tidx] = _math.log(v)

        @cute.jit
        def f(x, mx, sm, lg):
            lay = cute.make_layout((4, 8), loc=None, ip=None)
            assert x._dtype is cutlass.Float32 and cute.size(lay, loc=None) == 32
            k(x, mx, sm, lg).launch(grid=(1, 1, 1), block=(32, 1, 1))

        x = torch.arange(1, 33, dtype=torch.float32, device="cuda")
        mx, sm, lg = (torch.zeros(32, device="cuda") for _ in range(3))
        f(from_dlpack(x), from_dlpack(mx), from_dlpack(sm), from_dlpack(lg))
        print(mx.tolist() == [float(8 * (i // 8 + 1)) for i in range(32)], sm.tolist() == [528.0] * 32)
        print(torch.allclose(lg, torch.log(x)))
    """))
    assert out.split() == ["True", "True", "True"]
def test_internal_names_flash_attn_cute_imports(tmp_path):
    """What flash_attn.cute (flash-attn-4 4.0.0b27) and quack 0.5.3 reach for at import: each works, or
    imports and raises naming itself and the line when used."""
    out = ok(run(tmp_path, """
        import cutlass
        import cutlass.cute as cute
        import cutlass.pipeline as pipeline
        from cutlass.cutlass_dsl import BaseDSL, CuTeDSL, min as dsl_min, max as dsl_max
        from cutlass.base_dsl.tvm_ffi_builder import spec
        import cutlass.cute._tvm_ffi_args_spec_converter as conv
        from cutlass.utils.hardware_info import HardwareInfo
        from cutlass.cute.nvgpu import tcgen05
        from cutlass._mlir.dialects import cute_nvgpu

        print(BaseDSL._get_dsl().get_arch_enum(), CuTeDSL._get_dsl().get_arch_enum(), dsl_min(3, 2), dsl_max(3, 2))
        print(spec.ConstNone("flag").name, isinstance(spec.ConstInt("n", 4), spec.Param), HardwareInfo is cutlass.utils.HardwareInfo)
        conv._convert_single_arg = lambda *a: "patched"   # quack patches it at import
        print(divmod(17, cute.FastDivmodDivisor(5)), 17 // cute.fast_divmod_create_divisor(4), cute.atom.CopyOp.__name__)
        print(isinstance(tcgen05.LdRed32x32bOp, type), isinstance(pipeline.MbarrierArray, type))
        # every DSL op takes loc=/ip= (quack's @dsl_user_op helpers pass them on); cutlass.extract_mlir_values
        print(cute.shape((2, 3), loc=None, ip=None), cute.size((2, 3), loc=None), cutlass.extract_mlir_values([cutlass.Int32(1), (cutlass.Int32(2), 3)]))
        from cutlass.base_dsl.arch import Arch
        print(Arch.sm_90a.is_family_of(Arch.sm_90a), Arch.sm_80.is_family_of(Arch.sm_90a), Arch.sm_103f.to_string())
        for use in (lambda: cutlass.base_dsl.runtime.cuda.load_cubin_module_data(b""),
                    lambda: pipeline.TmaStoreFence(),
                    lambda: tcgen05.LdRed32x32bOp(), lambda: cute_nvgpu.atom_make_exec_tma(), lambda: BaseDSL()):
            try:
                use()
            except Exception as e:
                print(type(e).__name__, "prog.py:" in str(e), str(e).split(" ")[0])
    """))
    assert out.splitlines() == [
        "sm_90a sm_90a 2 3",
        "flag True True",
        "(3, 2) 4 CopyOp",
        "True True",
        "(2, 3) 6 [1, 2]",
        "True False sm_103f",
        "NotEmulatedError True cutlass.base_dsl.runtime.cuda.load_cubin_module_data",
        "NotInCutelab True cutlass.pipeline.TmaStoreFence",
        "NotInCutelab True cute.nvgpu.tcgen05.LdRed32x32bOp",
        "NotEmulatedError True cutlass._mlir.dialects.cute_nvgpu.atom_make_exec_tma",
        "NotEmulatedError True cutlass.base_dsl.BaseDSL()",
    ]


def test_warp_reductions_and_nvvm_fmax_in_a_kernel(tmp_path):
    """cute.arch.warp_reduction_max/_sum over groups of lanes (flash_attn.cute's softmax: groups of 4) and
    nvvm.fmax of f32 values (PTX max.f32: a NaN operand gives the other one)."""
    out = ok(run(tmp_path, """
        import torch
        import cutlass
        import cutlass.cute as cute
        from cutlass._mlir.dialects import nvvm
        from cutlass.cute.runtime import from_dlpack

        @cute.kernel
        def k(a: cute.Tensor, mx: cute.Tensor, sm: cute.Tensor, fm: cute.Tensor):
            tidx, _, _ = cute.arch.thread_idx()
            v = a[tidx]
            mx[tidx] = cute.arch.warp_reduction_max(v, threads_in_group=4)
            sm[tidx] = cute.arch.warp_reduction_sum(v)
            fm[tidx] = cutlass.Float32(nvvm.fmax(v.ir_value(), cutlass.Float32(float("nan")).ir_value()))

        @cute.jit
        def host(a, mx, sm, fm):
            k(a, mx, sm, fm).launch(grid=(1, 1, 1), block=(32, 1, 1))

        a = torch.arange(32, dtype=torch.float32).flip(0) * 0.5
        mx, sm, fm = (torch.zeros(32) for _ in range(3))
        host(*(from_dlpack(x) for x in (a, mx, sm, fm)))
        print(mx.tolist() == [float(a[i // 4 * 4:i // 4 * 4 + 4].max()) for i in range(32)])
        print(sm.tolist() == [float(a.sum())] * 32, fm.tolist() == a.tolist())
    """))
    assert out.splitlines() == ["True", "True True"]


def test_blackwell_program_names(tmp_path):
    """Names CUTLASS's Blackwell programs use: cutlass.target_version (against CUDA_VERSION 12.9),
    cute.arch.Arch (sm_101 an alias of sm_110, as CuTe DSL 4.8.1 has it), cute.arch.warp_redux_sync
    (Float32 max is fmax, Uint32 max is umax), and a cute.sym_int passed to cute.compile as a value."""
    out = ok(run(tmp_path, """
        import torch
        import cutlass
        import cutlass.cute as cute
        from cutlass.cute.arch import Arch
        from cutlass.cute.runtime import from_dlpack, make_fake_compact_tensor

        print(cutlass.target_version(min_version="12.0"), cutlass.target_version(min_version="13.1"),
              cutlass.target_version(max_version="12.9"), cutlass.target_version(exact_version="12.8"))
        print(Arch.sm_100 <= Arch.sm_100a <= Arch.sm_100f, Arch.sm_101 is Arch.sm_110, Arch.from_string("sm_101a"))


        @cute.kernel
        def red(x: cute.Tensor, out: cute.Tensor):
            tidx, _, _ = cute.arch.thread_idx()
            m = cute.arch.warp_redux_sync(x[tidx], "max")  # Float32: fmax
            s = cute.arch.warp_redux_sync(cutlass.Int32(tidx) * 3, "add")
            u = cute.arch.warp_redux_sync(cutlass.Uint32(tidx), "max")  # Uint32: umax
            n = cute.arch.warp_redux_sync(x[tidx], kind="fmin", abs=True)
            if tidx == 0:
                out[0] = m
                out[1] = cutlass.Float32(s)
                out[2] = cutlass.Float32(u)
                out[3] = n


        @cute.jit
        def run_red(x: cute.Tensor, out: cute.Tensor):
            red(x, out).launch(grid=(1, 1, 1), block=(32, 1, 1))


        x = torch.arange(32, dtype=torch.float32) - 20.5
        out = torch.zeros(4)
        run_red(from_dlpack(x), from_dlpack(out))
        print(out.tolist())


        @cute.kernel
        def fill(y: cute.Tensor):
            bidx, _, _ = cute.arch.block_idx()
            tidx, _, _ = cute.arch.thread_idx()
            y[bidx * 4 + tidx] = y[bidx * 4 + tidx] + 1.0


        @cute.jit
        def host(y: cute.Tensor, mn):
            fill(y).launch(grid=(cute.ceil_div(mn[0], 4), 1, 1), block=(4, 1, 1))


        n = cute.sym_int(divisibility=4)
        f = cute.compile(host, make_fake_compact_tensor(cutlass.Float32, (n,)), (n, 1))
        y = torch.zeros(12)
        f(from_dlpack(y), (12, 1))
        print(y.tolist())
    """, env={"CUTE_DSL_ARCH": "sm_100a"}))
    assert out.splitlines() == [
        "True False True False",
        "True True sm_110a",
        "[10.5, 1488.0, 31.0, 0.5]",  # max of t - 20.5; sum of 3 t; umax of t; fmin of |t - 20.5|
        "[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]",  # 3 blocks of 4 for n = 12
    ]


def test_trivial_tiled_mma_deprecated_form_takes_its_a_source():
    """CuTe DSL's deprecated make_trivial_tiled_mma(ab_dtype, a_major, b_major, acc_dtype, cta_group, mma_tiler_mn,
    a_source=...) reads A from tensor memory when asked by name (flash_attn.cute's SM100 backward, its dS)."""
    import warnings

    import cutelab as cutlass
    import cutelab.utils.blackwell_helpers as sm100_utils
    from cutelab.nvgpu import OperandMajorMode, tcgen05

    for src in (tcgen05.OperandSource.TMEM, tcgen05.OperandSource.SMEM):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            mma = sm100_utils.make_trivial_tiled_mma(cutlass.BFloat16, OperandMajorMode.K, OperandMajorMode.MN,
                                                     cutlass.Float32, tcgen05.CtaGroup.ONE, (128, 64), a_source=src)
            by_position = sm100_utils.make_trivial_tiled_mma(cutlass.BFloat16, OperandMajorMode.K,
                                                             OperandMajorMode.MN, cutlass.Float32,
                                                             tcgen05.CtaGroup.ONE, (128, 64), src)
        assert mma.op.a_src is src and by_position.op.a_src is src


def test_blackwell_helpers_has_the_tcgen05_names_cute_dsl_imports_into_it():
    """CuTe DSL's cutlass.utils.blackwell_helpers imports these from cute.nvgpu.tcgen05, and programs use them from
    there (flash_attn.cute's copy_utils: sm100_utils.get_tmem_copy_properties(atom))."""
    import cutelab as cutlass
    import cutelab.utils.blackwell_helpers as sm100_utils
    from cutelab.nvgpu import tcgen05

    for name in ("get_tmem_copy_properties", "is_tmem_load", "tile_to_mma_shape", "Ld32x32bOp", "Repetition"):
        assert getattr(sm100_utils, name) is getattr(tcgen05, name), name
    atom = cutlass.make_copy_atom(tcgen05.Ld32x32bOp(tcgen05.Repetition.x16), cutlass.Float32)
    assert sm100_utils.get_tmem_copy_properties(atom)[:3] == (32, 32, 16)
