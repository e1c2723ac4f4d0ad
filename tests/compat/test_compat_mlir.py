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
                     lambda: vector.broadcast(T.vector(1, T.i64()), None),
                     lambda: nvvm.fmax(1.0, 2.0),
                     lambda: ir.IntegerType.get_signless(32)):
            try:
                call()
            except NotImplementedError as e:
                print(str(e).split(" (")[0], "prog.py:" in str(e))
    """))
    assert out.splitlines() == [
        "False",
        "PTX instruction 'mapa.shared::cluster.u32' True",
        "cutlass._mlir.dialects.vector.broadcast is not emulated by cutelab True",
        "cutlass._mlir.dialects.nvvm.fmax is not emulated by cutelab True",
        "cutlass._mlir.ir.IntegerType.get_signless is not emulated by cutelab True",
    ]
