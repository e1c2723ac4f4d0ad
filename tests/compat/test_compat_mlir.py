"""cutlass._mlir: llvm.inline_asm of known PTX in kernels; other MLIR names import and raise by name."""
from compat_helpers import ok, run


def test_inline_asm_of_known_ptx_runs_in_a_kernel(tmp_path):
    out = ok(run(tmp_path, """
        import torch
        import cutlass
        import cutlass.cute as cute
        from cutlass import Float32
        from cutlass.cutlass_dsl import T, dsl_user_op
        from cutlass._mlir.dialects import llvm
        from cutlass.cute.runtime import from_dlpack

        @dsl_user_op
        def rsqrt(a, *, loc=None, ip=None):
            return llvm.inline_asm(T.f32(), [a], "rsqrt.approx.ftz.f32 $0, $1;", "=f,f",
                                   has_side_effects=False, is_align_stack=False, asm_dialect=llvm.AsmDialect.AD_ATT)

        @dsl_user_op
        def fma(a, b, c, *, loc=None, ip=None):
            return llvm.inline_asm(T.f32(), [a, b, c], "fma.rn.f32 $0, $1, $2, $3;", "=f,f,f,f")

        @cute.kernel
        def k(gA: cute.Tensor, gB: cute.Tensor):
            tidx, _, _ = cute.arch.thread_idx()
            v = gA[tidx]
            gB[tidx] = fma(rsqrt(v), v, v)

        @cute.jit
        def f(a: cute.Tensor, b: cute.Tensor):
            k(a, b).launch(grid=(1, 1, 1), block=(16, 1, 1))

        a = torch.rand(16, device="cuda") + 0.5; b = torch.zeros(16, device="cuda")
        f(from_dlpack(a), from_dlpack(b))
        print(torch.allclose(b, torch.rsqrt(a) * a + a))
    """))
    assert out.strip() == "True"


def test_unknown_ptx_and_mlir_ops_name_themselves(tmp_path):
    out = ok(run(tmp_path, """
        from cutlass._mlir.dialects import llvm, nvvm, vector, arith
        from cutlass._mlir import ir
        from cutlass.cutlass_dsl import T
        print(isinstance(1.0, ir.Value))
        for call in (lambda: llvm.inline_asm(T.i32(), [1, 2], "mapa.shared::cluster.u32 $0, $1, $2;", "=r,r,r"),
                     lambda: vector.shuffle(None, None, [0]),
                     lambda: nvvm.barrier0(),
                     lambda: ir.IndexType.get()):
            try:
                call()
            except NotImplementedError as e:
                print(str(e).split(" (")[0], "prog.py:" in str(e))
    """))
    assert out.splitlines() == [
        "False",
        "PTX instruction 'mapa.shared::cluster.u32' True",
        "cutlass._mlir.dialects.vector.shuffle is not emulated by cutelab True",
        "cutlass._mlir.dialects.nvvm.barrier0 is not emulated by cutelab True",
        "cutlass._mlir.ir.IndexType.get is not emulated by cutelab True",
    ]


def test_nvvm_atomicrmw_inc_add_and_cas(tmp_path):
    """quack's dynamic tile scheduler: nvvm.atomicrmw(op=INC, ptr=semaphore.llvm_ptr, a=Int32(n - 1).ir_value())
    hands out work items 0..n-1 and wraps to 0 (atom.inc.u32); ADD and CAS take the same operands as
    cute.arch's atomics (CAS: a compared, b stored). Every thread of 2 blocks of 32 increments one counter."""
    out = ok(run(tmp_path, """
        import torch
        import cutlass
        import cutlass.cute as cute
        from cutlass import Int32
        from cutlass._mlir.dialects import nvvm
        from cutlass.cute.runtime import from_dlpack

        @cute.kernel
        def k(sem: cute.Tensor, got: cute.Tensor):
            tidx, _, _ = cute.arch.thread_idx()
            bidx, _, _ = cute.arch.block_idx()
            t = bidx * 32 + tidx
            got[t, 0] = Int32(nvvm.atomicrmw(op=nvvm.AtomicOpKind.INC, ptr=sem.iterator.llvm_ptr,
                                             a=Int32(39).ir_value()))
            got[t, 1] = Int32(nvvm.atomicrmw(op=nvvm.AtomicOpKind.ADD, ptr=sem.iterator + 1, a=Int32(2).ir_value(),
                                             mem_order=nvvm.MemOrderKind.RELAXED, syncscope=nvvm.MemScopeKind.GPU))
            got[t, 2] = Int32(nvvm.atomicrmw(op=nvvm.AtomicOpKind.CAS, ptr=sem.iterator + 2, a=Int32(0).ir_value(),
                                             b=Int32(7).ir_value()))

        @cute.jit
        def f(sem: cute.Tensor, got: cute.Tensor):
            k(sem, got).launch(grid=(2, 1, 1), block=(32, 1, 1))

        sem = torch.zeros(3, dtype=torch.int32, device="cuda")
        got = torch.zeros(64, 3, dtype=torch.int32, device="cuda")
        f(from_dlpack(sem), from_dlpack(got))
        old = sorted(got[:, 0].tolist())
        print(old == sorted(list(range(40)) + list(range(24))), sem.tolist())
        print(sorted(got[:, 1].tolist()) == list(range(0, 128, 2)), sorted(got[:, 2].tolist()) == [0] + [7] * 63)
        try:
            nvvm.atomicrmw(op=nvvm.AtomicOpKind.SUB, ptr=None, a=1)
        except NotImplementedError as e:
            print(str(e).split(" (")[0])
    """))
    assert out.splitlines() == ["True [24, 128, 7]", "True True",
                                "nvvm.atomicrmw(op=SUB) is not emulated by cutelab"]


def test_prmt_sqrt_approx_and_copy_atoms_with_a_location(tmp_path):
    """What quack's GEMM epilogues and tile scheduler call: cute.arch.prmt (bytes of b:a picked by a runtime
    selector), cute.math.sqrt(x, approx=True), make_copy_atom(..., loc=loc, ip=ip) of a dsl_user_op."""
    out = ok(run(tmp_path, """
        import torch
        import cutlass
        import cutlass.cute as cute
        from cutlass import Int32, Uint32, Float32
        from cutlass.cute.runtime import from_dlpack

        @cute.kernel
        def k(a: cute.Tensor, b: cute.Tensor, o: cute.Tensor, x: cute.Tensor, r: cute.Tensor):
            tidx, _, _ = cute.arch.thread_idx()
            sel = Int32(0x5410) if tidx % 2 == 0 else Int32(0x7632)  # low or high halves of a and b
            o[tidx] = cute.arch.prmt(a[tidx], b[tidx], sel)
            r[tidx] = cute.math.sqrt(x[tidx], approx=True)
            cute.make_copy_atom(cute.nvgpu.CopyUniversalOp(), Float32, loc=None, ip=None)
            cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(False, 4), cutlass.BFloat16, loc=None, ip=None)

        @cute.jit
        def f(a: cute.Tensor, b: cute.Tensor, o: cute.Tensor, x: cute.Tensor, r: cute.Tensor):
            k(a, b, o, x, r).launch(grid=(1, 1, 1), block=(4, 1, 1))

        a = torch.tensor([0x11223344, 0x11223344, 0x0A0B0C0D, -1], dtype=torch.int32, device="cuda")
        b = torch.tensor([0x55667788, 0x55667788, 0x01020304, 0], dtype=torch.int32, device="cuda")
        o = torch.zeros(4, dtype=torch.int32, device="cuda")
        x = torch.tensor([2.25, 4.0, 6.25, 100.0], device="cuda"); r = torch.zeros(4, device="cuda")
        f(from_dlpack(a), from_dlpack(b), from_dlpack(o), from_dlpack(x), from_dlpack(r))
        print([hex(v & 0xFFFFFFFF) for v in o.tolist()], r.tolist())
        try:
            cute.math.sqrt(2.0, ftz=True)
        except NotImplementedError as e:
            print(str(e).split(" (")[0])
    """))
    assert out.splitlines() == ["['0x77883344', '0x55661122', '0x3040c0d', '0xffff'] [1.5, 2.0, 2.5, 10.0]",
                                "cute.math.sqrt(ftz=True) is not emulated by cutelab"]


def test_vector_ops_pack_two_floats_in_an_int64_and_back(tmp_path):
    # quack's f32x2_to_i64 / i64_to_f32x2 (its online softmax keeps (max, sum) in one 64-bit word)
    out = ok(run(tmp_path, """
        import numpy as np
        import cutlass
        import cutlass.cute as cute
        from cutlass import Float32, Int64
        from cutlass.cutlass_dsl import T, dsl_user_op
        from cutlass._mlir.dialects import vector
        from cutlass.cute.runtime import from_dlpack

        @dsl_user_op
        def pack(a, b, *, loc=None, ip=None):
            v = vector.from_elements(T.vector(2, T.f32()), (a.ir_value(), b.ir_value()), loc=loc, ip=ip)
            w = vector.bitcast(T.vector(1, T.i64()), v)
            return Int64(vector.extract(w, dynamic_position=[], static_position=[0], loc=loc, ip=ip))

        @dsl_user_op
        def unpack(c, *, loc=None, ip=None):
            v = vector.bitcast(T.vector(2, T.f32()), vector.from_elements(T.vector(1, T.i64()), (c.ir_value(),)))
            v = vector.insert(Float32(0.5).ir_value(), v, dynamic_position=[], static_position=[1])
            return (Float32(vector.extract(v, dynamic_position=[], static_position=[0])),
                    Float32(vector.extract(v, dynamic_position=[], static_position=[1])))

        @cute.kernel
        def k(gA: cute.Tensor, gW: cute.Tensor, gB: cute.Tensor):
            t, _, _ = cute.arch.thread_idx()
            w = pack(gA[t, 0], gA[t, 1])
            gW[t] = w
            x, y = unpack(w)
            gB[t, 0] = x
            gB[t, 1] = y

        @cute.jit
        def f(a: cute.Tensor, w: cute.Tensor, b: cute.Tensor):
            k(a, w, b).launch(grid=(1, 1, 1), block=(4, 1, 1))

        a = np.array([[1.0, -2.0], [3.5, 0.0], [-0.0, 1e-3], [7.0, 8.0]], np.float32)
        w = np.zeros(4, np.int64); b = np.zeros_like(a)
        f(from_dlpack(a), from_dlpack(w), from_dlpack(b))
        print((w == a.view(np.int64)[:, 0]).all(), (b[:, 0] == a[:, 0]).all(), (b[:, 1] == 0.5).all())
    """))
    assert out.strip() == "True True True"


def test_dialect_auto_convert_proxy():
    """cutlass._mlir_helpers.dialect_proxy.DialectAutoConvertProxy: operations take DSL values (their
    ir_value(), in lists too); enums and types pass through; a missing name raises as the dialect does."""
    from cutelab.compat.mlir.dialects import llvm
    from cutelab.compat.mlir_helpers.dialect_proxy import DialectAutoConvertProxy
    from cutelab.numeric import Float32

    proxy = DialectAutoConvertProxy(llvm)
    assert proxy.inline_asm(None, [Float32(2.0), 3.0, Float32(1.0)], "fma.rn.f32 $0, $1, $2, $3;", "=f,f,f,f") == 7.0
    assert proxy.AsmDialect is llvm.AsmDialect and proxy.PointerType is llvm.PointerType
    ptr = object()
    assert proxy.addrspacecast(llvm.PointerType.get(7), ptr) is ptr
