"""CUTLASS's examples/python/CuTeDSL/experimental/primitives programs (``cutlass.experimental.
primitives``, ``cutlass.Array``, raw pointers), stored unchanged under programs/primitives/ (from
NVIDIA/cutlass 7107b05535f8977f5ecb9d01ee203205b1fd9bc4, with their license headers), each run by
``cutelab run`` on the CPU at its default sizes (the tma/ ones build TMA descriptors with
``cutlass.experimental.cuda.create_tensor_map_tiled``): it must exit 0 and report its own verification
(each program compares its kernel's output with a torch reference and prints ``PASS``; none
prints ``FAIL``).

Also: the wrappers cutelab does not provide refuse by name with the user's line, and the PTX
interpreter's warp instructions behind them (vote, elect, f32 redux) against plain numpy.
"""
import os
import subprocess
import sys
import textwrap
import re
import shutil

import numpy as np
import pytest

from compat_helpers import run
from test_compat_programs import _cutelab_run

HERE = os.path.dirname(os.path.abspath(__file__))
PRIMS = os.path.join(HERE, "programs", "primitives")

PROGRAMS = [
    "async_pipeline", "bar_warp_sync", "barrier_cta_red", "basic_types", "barrier_cta_sync",
    "cp_async_mbarrier_arrive_cluster", "cp_async_mbarrier_arrive_cta", "cp_async_shared_global",
    "cp_async_shared_global_swizzled", "elect_sync", "mapa", "mbarrier", "mbarrier_lifecycle",
    "pipeline_software_fill", "red", "redux_sync", "shfl_sync", "vote_sync", "warp_named_barrier",
    "reduction/block_smem_reduce", "reduction/cluster_smem_reduce", "reduction/thread_vector_reduce",
    "reduction/warp_vector_reduce", "tutorial/01_hello_world", "tutorial/06_softmax",
    # TMA through cutlass.experimental.cuda tensor maps (compat/experimental/tensor_map.py)
    "tma/tma_1cta_mbarrier", "tma/tma_store", "tma/tma_pipeline_single_warp", "tma/tma_swizzle_modes",
    "tma/tma_pipeline_count2", "tma/tma_pipeline_pingpong", "tma/tma_pipeline_warpspec", "tma/tma_load_store",
    "cp_async_bulk_prefetch", "ldmatrix_stmatrix", "tma/tma_load_to_ldmatrix", "tma/tma_multicast",
    "tutorial/07_vectorized_array",
    # raw cp.async.bulk both ways (kernel/instr/bulk_copy.py), over 256-byte aligned "cuda" tensors
    "cp_async_bulk",
    # a descriptor copied from a tensor map into memory, patched there (tensormap.replace), then used
    "tma/tma_tensormap_replace",
]
# more runs of the programs above, with arguments: the transposing forms of ldmatrix/stmatrix
WITH_ARGS = [
    ("ldmatrix_stmatrix", ("--mode", "b16-ldmatrix-transpose", "--NUM_TILES", "2")),
    ("ldmatrix_stmatrix", ("--mode", "b16-stmatrix-transpose", "--NUM_TILES", "4")),
    ("tma/tma_load_to_ldmatrix", ("--mode", "transpose")),
]
# programs that print shared memory instead of checking it: test_tma_load_tutorial_prints_the_swizzled_tile
PRINTING = ["tutorial/04_tma_load", "tutorial/08_mlir_value_tree_debug"]
# Blackwell programs (run with CUTE_DSL_ARCH=sm_100a): the tensor-memory wrappers (compat/experimental/tcgen05.py)
SM100 = ["tcgen05/tmem_ld_st", "tutorial/05_minimal_tensor_mma", "tutorial/gemm_M128_N128_Kany_TN_warpspec_multistage",
         "tutorial/10_minimal_tensor_mma_fp8"]
# programs that break a hardware rule, run to the interpreter's error naming it: test_cluster_tmem_reduce_reads_...
BREAKING = ["reduction/cluster_tmem_reduce"]


def test_the_stored_programs_are_the_listed_ones():
    found = sorted(os.path.relpath(os.path.join(d, f), PRIMS)[:-3] for d, _, fs in os.walk(PRIMS) for f in fs
                   if f.endswith(".py"))
    assert found == sorted(PROGRAMS + PRINTING + SM100 + BREAKING)
    for n in PROGRAMS + PRINTING + SM100 + BREAKING:
        with open(os.path.join(PRIMS, n + ".py")) as f:
            head = f.read(200)
        assert re.match(r"# Copyright \(c\) (2025 - )?2026 NVIDIA CORPORATION", head) and "BSD-3-Clause" in head, n


def _expected_output(path):
    """The lines a program's closing '# Expected output:' comment lists (tutorial/01_hello_world)."""
    with open(path) as f:
        text = f.read()
    if "# Expected output:" not in text:
        return None
    tail = text.split("# Expected output:", 1)[1].strip().splitlines()
    return [line[2:] for line in tail if line.startswith("# ")]


@pytest.mark.parametrize("name,args", [(n, ()) for n in PROGRAMS] + WITH_ARGS,
                         ids=[n for n in PROGRAMS] + [f"{n}-{a[1]}" for n, a in WITH_ARGS])
def test_primitives_program_runs_unchanged(name, args, tmp_path):
    path = os.path.join(PRIMS, name + ".py")
    p = _cutelab_run(path, *args, cwd=tmp_path, timeout=300)
    out = p.stdout
    assert p.returncode == 0, f"{name}: exit {p.returncode}\n{out[-2000:]}\n{p.stderr[-3000:]}"
    expected = _expected_output(path)
    if expected is not None:  # the program prints from its kernel: its output is the one it documents
        assert out.splitlines() == expected, f"{name}: printed\n{out}\nexpected\n{expected}"
    else:
        # "verify ...: PASS" lines, or (tutorial/06_softmax) a table of checks closed by a line "PASS", or
        # (tma/*, tutorial/07) "PASS" lines, each printed after the program's torch.testing.assert_close
        lines = out.rstrip().splitlines()
        reported = "verify" in out or any(line == "PASS" or line.startswith("PASS  ") for line in lines)
        assert reported and "PASS" in out and "FAIL" not in out, f"{name}: no verification reported:\n{out}"


# each SM100 program: a line its own check prints, and what the CUDA of its last launch must hold
_SM100_WANT = {
    "tcgen05/tmem_ld_st": ("verify (N_REPS=32): PASS  out[:4] = [1.0, 1.0, 1.0, 1.0]", (
        "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 32;",
        "tcgen05.st.sync.aligned.32x32b.x32.b32", "tcgen05.ld.sync.aligned.32x32b.x32.b32",
        "tcgen05.wait::st.sync.aligned;", "tcgen05.fence::before_thread_sync;",
        "tcgen05.dealloc.cta_group::1.sync.aligned.b32", "tcgen05.relinquish_alloc_permit")),
    # prims.exit of warps 2 and 3, Tcgen05SmemDesc / Tcgen05InstrDesc, tcgen05_mma kind::f16, tcgen05_commit
    "tutorial/05_minimal_tensor_mma": ("PASS", (
        'asm volatile("exit;"', "tcgen05.mma.cta_group::1.kind::f16",
        "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64",
        "tcgen05.ld.sync.aligned.32x32b.x2.b32")),
    # e4m3 operands (an instruction descriptor built with Float16 formats: code 0, e4m3 under kind::f8f6f4), an f16
    # accumulator in tensor memory (one per 32-bit column), read with tcgen05.ld's pack::16b
    "tutorial/10_minimal_tensor_mma_fp8": ("PASS", (
        "tcgen05.mma.cta_group::1.kind::f8f6f4", "tcgen05.ld.sync.aligned.32x32b.x16.pack::16b.b32")),
    # six smem stages of TMA -> UMMA over K = 4096 with warp specialisation and an exit
    "tutorial/gemm_M128_N128_Kany_TN_warpspec_multistage": ("Correctness: PASS", (
        'asm volatile("exit;"', "tcgen05.mma.cta_group::1.kind::f16")),
}


@pytest.mark.parametrize("name", SM100)
def test_sm100_program_runs_unchanged_and_renders_tcgen05(name, tmp_path):
    """The Blackwell primitives programs (compat/experimental/tcgen05.py, tcgen05_mma.py, prims.exit) pass their
    own checks on the CPU interpreter for sm_100a, and the CUDA of their launch has the tcgen05 instructions."""
    from compat_helpers import SRC, _DRIVER

    env = dict(os.environ, PYTHONPATH=SRC, PYTHONHASHSEED="0", CUTE_DSL_ARCH="sm_100a")
    cu = tmp_path / "kernel.cu"
    p = subprocess.run([sys.executable, "-c", _DRIVER, str(cu), os.path.join(PRIMS, name + ".py")],
                       cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"exit {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
    line, wants = _SM100_WANT[name]
    assert line in p.stdout.splitlines(), p.stdout[-2000:]
    code = cu.read_text()
    for want in wants:
        assert want in code, f"{want!r} not in the CUDA:\n{code[-4000:]}"


def test_tma_load_tutorial_prints_the_swizzled_tile(tmp_path):
    """tutorial/04_tma_load loads the 64 x 64 f16 tile at (0, 0) of a[r, c] = c + 100 r with a 128-byte
    swizzle and prints the shared array (twice: a dynamic and a static layout): shared element e holds
    the tile element whose byte address the swizzle maps to e's (Swizzle<3,4,3> is its own inverse)."""
    path = os.path.join(PRIMS, "tutorial/04_tma_load.py")
    p = _cutelab_run(path, cwd=tmp_path, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    want = []
    for i in range(16):
        row = []
        for j in range(16):
            b = (i * 64 + j) * 2
            lin = (b ^ (((b >> 7) & 7) << 4)) // 2
            r, c = divmod(lin, 64)
            row.append(f"{float(c + 100 * r):.1f}")
        want.append(f" [{i}]: [{', '.join(row)}, ...]")
    block = ["Array[64x64]:"] + want + [" ..."]
    lines = p.stdout.splitlines()
    starts = [k for k, line in enumerate(lines) if line == "Array[64x64]:"]
    assert len(starts) == 2 and all(lines[k:k + len(block)] == block for k in starts), p.stdout[-4000:]
    assert lines[-1] == "PASS"


def test_single_warp_pipeline_renders_its_wide_index(tmp_path):
    """tma/tma_pipeline_single_warp.py stores to (coord_m + row) * (k_tiles * 64) + ...: a product of two Int32
    arguments' full ranges, wider than 64 bits by intervals (the GPU refused it: 'an index expression exceeds
    64 bits'). Its last launch renders to CUDA that computes that index modulo 2**64 (cuda/intexpr.py)."""
    import subprocess
    import sys

    from compat_helpers import SRC, _DRIVER

    cu = tmp_path / "kernel.cu"
    env = dict(os.environ, PYTHONPATH=SRC, PYTHONHASHSEED="0")
    env.pop("CUTE_DSL_ARCH", None)
    p = subprocess.run([sys.executable, "-c", _DRIVER, str(cu), os.path.join(PRIMS, "tma/tma_pipeline_single_warp.py")],
                       cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and "PASS  TMA 2-stage pipeline" in p.stdout, p.stderr[-3000:]
    src = cu.read_text()
    assert re.search(r"const long long \w+ = \(\(long long\)\(\(\(\(\(unsigned long long\)coord_m\) \+ "
                     r"\(\(unsigned long long\)threadIdx\.x\)\) \* \(64ull \* \(\(unsigned long long\)k_tiles\)\)\)",
                     src), src[-4000:]


def test_raw_bulk_copies_render_as_cp_async_bulk(tmp_path):
    """cp_async_bulk.py's load (prims.cp_async_bulk_shared_cluster_global) and store
    (prims.cp_async_bulk_global_shared_cta) are kernel/instr/bulk_copy.py's ops: the CUDA of its launch has
    the mbarrier-completed load of TILE_BYTES = 2048 bytes and the bulk-group store."""
    from compat_helpers import run_program

    out, cu = run_program(tmp_path, "primitives/cp_async_bulk.py", "--NUM_CTAS", "4")
    assert "verify (n=32768, TILE_ELEMS=1024, NUM_STAGES=2): PASS" in out
    assert re.search(r'cp\.async\.bulk\.shared::cluster\.global\.mbarrier::complete_tx::bytes \[%0\], \[%1\], %2, '
                     r'\[%3\];" :: "r"\([^;]*"r"\(2048u\)', cu), cu[-4000:]
    assert re.search(r'cp\.async\.bulk\.global\.shared::cta\.bulk_group \[%0\], \[%1\], %2;" :: "l"\([^;]*'
                     r'"r"\(2048u\)', cu), cu[-4000:]
    assert "cp.async.bulk.commit_group;" in cu and "cp.async.bulk.wait_group 0;" in cu


_BULK = """
    import torch
    import cutlass
    import cutlass.cute as cute
    from cutlass.experimental import primitives as prims

    @cute.kernel
    def k(src: cutlass.Array, dst: cutlass.Array):
        smem = cutlass.Array(cutlass.{sdtype}, 64, space=cutlass.AddressSpace.smem, alignment=128)
        bar = cutlass.Array(cutlass.Int64, 1, space=cutlass.AddressSpace.smem, alignment=8)
        prims.mbarrier_init(bar, 1)
        prims.fence_mbarrier_init()
        prims.mbarrier_arrive_expect_tx(bar, {nbytes})
        prims.cp_async_bulk_shared_cluster_global(smem, src.subview({src_off}), bar, {nbytes})
        while not prims.mbarrier_try_wait_parity(bar, 0):
            pass
        prims.cp_async_bulk_global_shared_cta(dst.subview({dst_off}), smem, {nbytes})
        prims.cp_async_bulk_commit_group()
        prims.cp_async_bulk_wait_group(0)

    @cute.jit
    def host(src: cute.Tensor, dst: cute.Tensor):
        k(src, dst).launch(grid=(1, 1, 1), block=(1, 1, 1))

    src = torch.arange(64, dtype=torch.float32, device="cuda") + 0.5
    dst = torch.zeros(64, dtype=torch.float32, device="cuda")
    host(src, dst)
    print(dst.tolist() == src.tolist() if {nbytes} == 256 else dst[:{nbytes} // 4].tolist())
"""


@pytest.mark.parametrize("nbytes,src_off,dst_off,err,sdtype", [
    (256, 0, 0, None, "Float32"),
    (256, 0, 0, None, "Int32"),  # bytes move, not values: Float32 bits through Int32 shared memory and back
    (64, 8, 0, None, "Float32"),
    (40, 0, 0, "prims.cp_async_bulk_shared_cluster_global: 40 bytes; a bulk copy moves a positive multiple of 16",
     "Float32"),
    (64, 2, 0, "the global address is aligned to 8 bytes only; a bulk copy needs 16-byte aligned addresses",
     "Float32"),
    (64, 56, 0, "bulk copy from src: elements 56..71 fall outside its 64 elements; nothing was copied", "Float32"),
    (64, 0, 60, "bulk copy into dst: elements 60..75 fall outside its 64 elements; nothing was stored", "Float32"),
])
def test_raw_bulk_copy_and_its_refusals(tmp_path, nbytes, src_off, dst_off, err, sdtype):
    p = run(tmp_path, _BULK.format(nbytes=nbytes, src_off=src_off, dst_off=dst_off, sdtype=sdtype))
    if err is None:
        assert p.returncode == 0, p.stderr[-3000:]
        assert p.stdout.strip() == ("True" if nbytes == 256 else str([x + 0.5 for x in range(8, 24)])), p.stdout
    else:
        assert p.returncode != 0 and err in p.stderr, p.stderr[-3000:]


def test_tensormap_replace_program_renders_its_edits(tmp_path):
    """tma/tma_tensormap_replace.py copies its tensor map's 16 words into a workspace (the CUtensorMap
    parameter's words on the GPU), replaces the global address and extent 1 there and loads through it."""
    from compat_helpers import run_program

    out, cu = run_program(tmp_path, "primitives/tma/tma_tensormap_replace.py")
    assert "[2800.0, 2800.0, 2802.0, 2804.0, ...]" in out
    for i in range(16):
        assert f"= (long long)((const unsigned long long*)&tmap_matrix_a)[{i}];" in cu, cu[-3000:]
    assert re.search(r'tensormap\.replace\.tile\.global_address\.global\.b1024\.b64 \[%0\], %1;" :: "l"\(cl_td\), '
                     r'"l"\(\(unsigned long long\)\(\(matrix_a \+ \(64ll \* \(\(long long\)row_offset\)\)\)\)\)', cu)
    assert 'tensormap.replace.tile.global_dim.global.b1024.b32 [%0], 1, %1;' in cu
    assert "((unsigned*)cl_td)[2] &= ~(1u << 21);" in cu  # CuTe DSL's reset of the OOB fetch window
    assert "fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" in cu
    assert re.search(r'cp\.async\.bulk\.tensor\.2d\.shared::cluster\.global\.mbarrier::complete_tx::bytes .*'
                     r'"l"\(\(unsigned long long\)\(desc_words \+ 0\)\)', cu)


_REPLACE = """
    import torch
    import cutlass
    import cutlass.cute as cute
    import cutlass.experimental.cuda as cuda
    from cutlass.experimental import primitives as prims

    @cute.kernel
    def k(a: cute.Tensor, tmap: cutlass.GridConstant[cuda.TensorMap], out: cutlass.Array, ws: cute.Tensor):
        tile = cutlass.Array(cutlass.Float32, 8 * 8, space=cutlass.AddressSpace.smem, alignment=128)
        bar = cutlass.Array(cutlass.Int64, 1, space=cutlass.AddressSpace.smem, alignment=8)
        prims.mbarrier_init(bar, 1)
        prims.fence_mbarrier_init()
        desc = ws.iterator.raw_ptr()
        words = cutlass.Pointer(tmap.get_ptr(), dtype=cutlass.Int64)
        {copy}
        {edit}
        prims.fence_proxy_release(prims.MemScope.GPU)
        prims.fence_proxy_acquire(prims.MemScope.GPU, desc, 128)
        prims.mbarrier_arrive_expect_tx(bar, tmap.global_tx_bytes())
        prims.cp_async_bulk_tensor_shared_cta_global(tile, desc, (0, 0), bar)
        while not prims.mbarrier_try_wait_parity(bar, 0):
            pass
        for i in cutlass.range_constexpr(64):
            out[i] = tile[i]

    @cute.jit
    def host(a: cute.Tensor, out: cutlass.Array, ws: cute.Tensor):
        tmap = cuda.create_tensor_map_tiled_from_view(a, box_dims=(8, 8), stride_order=(1, 0))
        k(a, tmap, out, ws).launch(grid=(1, 1, 1), block=(1, 1, 1))

    a = torch.arange(16 * 8, dtype=torch.float32, device="cuda").view(16, 8)
    out = torch.zeros(64, dtype=torch.float32, device="cuda")
    ws = torch.zeros(16, dtype=torch.int64, device="cuda")
    host(a, out, ws)
    print(out.view(8, 8)[:, 0].tolist())
"""
_COPY = "for i in cutlass.range_constexpr(16):\n            (desc + i).store((words + i).load())"


@pytest.mark.parametrize("copy,edit,want", [
    # every other row: the stride of dimension 1 doubled (64 bytes), the extent halved; rows past 5 are zeros
    (_COPY, "prims.tensormap_replace(prims.TensormapField.GLOBAL_STRIDE, desc, new_value=64, ord=0)\n"
            "        prims.tensormap_replace(prims.TensormapField.GLOBAL_DIM, desc, new_value=6, ord=1)",
     "[0.0, 16.0, 32.0, 48.0, 64.0, 80.0, 0.0, 0.0]"),
    (_COPY, "prims.tensormap_replace(prims.TensormapField.GLOBAL_DIM, desc, new_value=9, ord=2)",
     "the descriptor has 2 dimensions; ord=2 names dimension 2"),
    (_COPY, "prims.tensormap_replace(prims.TensormapField.GLOBAL_STRIDE, desc, new_value=40, ord=0)",
     "byte stride 40 of TMA dimension 1 is not a multiple of 16"),
    ("pass", "prims.tensormap_replace(prims.TensormapField.GLOBAL_DIM, desc, new_value=4, ord=1)",
     "the 128 bytes at the descriptor pointer hold no TMA descriptor"),
    (_COPY, "prims.tensormap_replace(prims.TensormapField.BOX_DIM, desc, new_value=4, ord=1)",
     "cutlass.experimental.primitives.tensormap_replace(BOX_DIM) is not emulated by cutelab"),
    (_COPY, "prims.tensormap_replace(prims.TensormapField.GLOBAL_DIM, desc, new_value=4)",
     "field 'global_dim' requires the 'ord' (dimension ordinal) parameter"),
    ("words.store(0)", "pass", "the tensor map is a __grid_constant__ kernel parameter, which a kernel cannot write"),
])
def test_tensormap_replace_edits_and_refusals(tmp_path, copy, edit, want):
    p = run(tmp_path, _REPLACE.format(copy=copy, edit=edit))
    if want.startswith("["):
        assert p.returncode == 0 and p.stdout.strip() == want, p.stdout + p.stderr[-3000:]
    else:
        assert p.returncode != 0 and want in p.stderr, p.stderr[-3000:]


def test_value_tree_tutorial_prints_what_it_expects(tmp_path):
    """tutorial/08_mlir_value_tree_debug carries user objects whose values are dict trees (an accumulator, a
    particle of two dataclass coordinates, a list of particles) through loops, and prints each result next
    to the value it expects ("Sum: 55.0 (expected: 55)"): every one must match."""
    p = _cutelab_run(os.path.join(PRIMS, "tutorial/08_mlir_value_tree_debug.py"), cwd=tmp_path, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    pairs = re.findall(r":\s+(\(?[-\d., ]+\)?) \(expected: (\(?[-\d., ]+\)?)\)", p.stdout)
    assert len(pairs) == 9, p.stdout[-3000:]
    nums = lambda t: [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", t)]  # noqa: E731
    assert all(nums(a) == nums(b) for a, b in pairs), pairs
    assert "PASS - All examples completed successfully!" in p.stdout


def test_an_array_parameter_refuses_a_tensor_that_is_not_row_major(tmp_path):
    """A kernel parameter annotated cutlass.Array sees its tensor as a row-major Array; a column-major
    tensor would be read at the wrong elements, so it is refused by name."""
    p = run(tmp_path, """
        import torch
        import cutlass
        import cutlass.cute as cute
        from cutlass.cute.runtime import from_dlpack

        @cute.kernel
        def k(a: cutlass.Array):
            a[0, 1] = cutlass.Float32(1.0)

        @cute.jit
        def host(a: cute.Tensor):
            k(a).launch(grid=(1, 1, 1), block=(1, 1, 1))

        host(from_dlpack(torch.zeros(4, 3).t()))
    """)
    assert p.returncode != 0
    assert "an Array is row-major and dense, but the tensor's strides are (1,3)" in p.stderr, p.stderr[-2000:]


def test_a_wrapper_cutelab_lacks_names_itself_and_the_line(tmp_path):
    p = run(tmp_path, """
        import cutlass
        import cutlass.cute as cute
        from cutlass.experimental import primitives as prims

        @cute.kernel
        def k():
            prims.mbarrier_arrive_drop(None)

        @cute.jit
        def host():
            k().launch(grid=(1, 1, 1), block=(32, 1, 1))

        host()
    """)
    assert p.returncode != 0
    assert "cutlass.experimental.primitives.mbarrier_arrive_drop is not emulated by cutelab" in p.stderr
    assert "prog.py:8" in p.stderr  # the call's line (the source starts with a blank line)


def test_unknown_primitive_is_an_attribute_error(tmp_path):
    p = run(tmp_path, """
        from cutlass.experimental import primitives as prims
        prims.no_such_wrapper
    """)
    assert p.returncode != 0 and "no attribute 'no_such_wrapper'" in p.stderr


# --------------------------------------------------------------------------- the PTX interpreter's warp instructions

def _run(asm, cons, inputs, nthreads=64):
    from cutelab.kernel.instr.ptx import Lanes, parse

    prog = parse(asm, cons)
    lanes = Lanes(np.arange(nthreads), (nthreads, 1, 1))
    return prog.run([np.asarray(x, np.uint64) for x in inputs], lanes)


def test_ptx_vote_ballot_any_all_uni():
    rng = np.random.default_rng(0)
    p = rng.integers(0, 2, 64)
    p[32:] = 1  # the second warp: all true
    mask = np.full(64, 0xFFFFFFFF)
    (ballot,) = _run("{ .reg .pred q; setp.ne.u32 q, $1, 0; vote.sync.ballot.b32 $0, q, $2; }", "=r,r,r", [p, mask])
    want0 = sum(int(b) << i for i, b in enumerate(p[:32]))
    assert (ballot[:32] == want0).all() and (ballot[32:] == 0xFFFFFFFF).all()
    for mode, w0, w1 in (("all", 0, 1), ("any", 1, 1), ("uni", 0, 1)):
        (r,) = _run(f"{{ .reg .pred q, s; setp.ne.u32 q, $1, 0; vote.sync.{mode}.pred s, q, $2; "
                    f"selp.u32 $0, 1, 0, s; }}", "=r,r,r", [p, mask])
        assert (r[:32] == w0).all() and (r[32:] == w1).all(), mode
    half = np.full(64, 0x0000FFFF)  # only the lower half warp's votes count
    (b,) = _run("{ .reg .pred q; setp.ne.u32 q, $1, 0; vote.sync.ballot.b32 $0, q, $2; }", "=r,r,r", [p, half])
    assert (b[:32] == (want0 & 0xFFFF)).all()


def test_ptx_elect_picks_the_lowest_lane_of_the_mask():
    for mask, lane in ((0xFFFFFFFF, 0), (0xFFFF0000, 16), (0x00000100, 8)):
        (r,) = _run("{ .reg .pred p; .reg .b32 l; elect.sync l|p, $1; selp.u32 $0, 1, 0, p; }", "=r,r",
                    [np.full(64, mask)])
        assert list(np.nonzero(r)[0]) == [lane, 32 + lane]


def test_ptx_redux_f32_min_max_abs_nan():
    x = np.linspace(-3.0, 2.0, 32).astype(np.float32)
    x[5] = np.nan
    bits = x.view(np.uint32).astype(np.uint64)
    m = np.full(32, 0xFFFFFFFF)
    f = lambda r: r.astype(np.uint32).view(np.float32)  # noqa: E731
    (r,) = _run("redux.sync.max.f32 $0, $1, $2;", "=f,f,r", [bits, m], 32)
    assert (f(r) == np.nanmax(x)).all()
    (r,) = _run("redux.sync.max.abs.f32 $0, $1, $2;", "=f,f,r", [bits, m], 32)
    assert (f(r) == np.nanmax(np.abs(x))).all()
    (r,) = _run("redux.sync.min.NaN.f32 $0, $1, $2;", "=f,f,r", [bits, m], 32)
    assert np.isnan(f(r)).all()


# --------------------------------------------------------------------------- the wrappers in one kernel: CPU and CUDA

def _wrappers_kernel():
    import cutelab as cute
    import cutelab as cutlass
    from cutelab.compat.experimental import wrappers as prims
    from cutelab.compat.experimental.memory import Array

    @cute.kernel
    def k(out: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        mbar = Array(cutlass.Int64, 1, space=cute.AddressSpace.smem, alignment=8)
        buf = Array(cutlass.Int32, 64, space=cute.AddressSpace.smem)
        if prims.elect_sync():
            prims.mbarrier_init(mbar, 64)
        prims.fence_mbarrier_init()
        prims.barrier_cta_sync(0)
        v = cutlass.Int32(tidx)
        b = prims.vote_sync(0xFFFFFFFF, tidx < 3, prims.VoteSync.BALLOT)
        a = prims.vote_sync(0xFFFFFFFF, tidx < 64, "all")
        s = prims.shfl_sync(0xFFFFFFFF, v, 1, 31, prims.Shfl.BFLY)
        u, ok = prims.shfl_sync(0xFFFFFFFF, v, 1, 0, prims.Shfl.UP, return_value_and_is_valid=True)
        r = prims.redux_sync(v, prims.ReductionKind.UMAX, 0xFFFFFFFF)
        buf[tidx] = b + s + u + r
        prims.bar_warp_sync(0xFFFFFFFF)
        state = prims.mbarrier_arrive(mbar)
        while not prims.mbarrier_try_wait_timelimit(mbar, state, 1000):
            pass
        prims.barrier_cta_sync(1, thread_count=64)
        c = prims.barrier_cta_red(tidx < 5, 2, "popc")
        out[tidx] = buf[tidx] + cutlass.Int32(a) + cutlass.Int32(ok) + c
        prims.barrier_cta_sync(0)
        if tidx == 0:
            prims.mbarrier_inval(mbar)
        prims.red("add", "s32", out.iterator.raw_ptr() + 64, v)


    @cute.jit
    def host(out: cute.Tensor):
        k(out).launch(grid=(1, 1, 1), block=(64, 1, 1))

    return host


def _expected_wrappers():
    t = np.arange(64)
    lane = t % 32
    ballot = np.where(t < 32, 7, 0)
    up = np.where(lane > 0, t - 1, t)
    warp_max = np.where(t < 32, 31, 63)
    return ballot + (t ^ 1) + up + warp_max + 1 + (lane > 0) + 5


def test_wrappers_run_on_the_cpu():
    import torch
    from cutelab.runtime import from_dlpack

    a = torch.zeros(65, dtype=torch.int32)
    _wrappers_kernel()(from_dlpack(a))
    assert a[:64].numpy().tolist() == _expected_wrappers().tolist()
    assert int(a[64]) == sum(range(64))  # prims.red


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc to compile the CUDA")
def test_wrappers_cuda_compiles_for_sm90(tmp_path):
    import torch
    from cutelab.kernel.cuda.fakegpu import fake_cuda_tensor, fake_gpu
    from cutelab.runtime import from_dlpack

    with fake_gpu(arch=(9, 0), nvcc=shutil.which("nvcc"), cache_dir=str(tmp_path)) as g:
        _wrappers_kernel()(from_dlpack(fake_cuda_tensor(torch.zeros(65, dtype=torch.int32))))
        assert g.nvrtc.compiles == 1 and len(g.launches) == 1


def _mapa_kernel():
    import cutelab as cute
    import cutelab as cutlass
    from cutelab.compat.experimental import wrappers as prims
    from cutelab.compat.experimental.memory import Array

    @cute.kernel
    def k(out: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        rank = cute.arch.block_idx_in_cluster()
        data = Array(cutlass.Float32, 32, space=cute.AddressSpace.smem)
        data[tidx] = cutlass.Float32(rank * 100 + tidx)
        prims.barrier_cluster_arrive()
        prims.barrier_cluster_wait()
        peer = prims.mapa(data.data_ptr(), (rank + 1) % 2)
        out[rank * 32 + tidx] = (peer + tidx).load()
        prims.barrier_cluster_arrive()
        prims.barrier_cluster_wait()


    @cute.jit
    def host(out: cute.Tensor):
        k(out).launch(grid=(2, 1, 1), block=(32, 1, 1), cluster=(2, 1, 1))

    return host


def test_mapa_pointer_loads_the_peer_ctas_shared_memory():
    import torch
    from cutelab.runtime import from_dlpack

    a = torch.zeros(64, dtype=torch.float32)
    _mapa_kernel()(from_dlpack(a))
    t = np.arange(32)
    assert a.numpy().tolist() == (100.0 + t).tolist() + t.astype(float).tolist()


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc to compile the CUDA")
def test_mapa_load_cuda_compiles_for_sm90(tmp_path):
    import torch
    from cutelab.kernel.cuda.fakegpu import fake_cuda_tensor, fake_gpu
    from cutelab.runtime import from_dlpack

    with fake_gpu(arch=(9, 0), nvcc=shutil.which("nvcc"), cache_dir=str(tmp_path)) as g:
        _mapa_kernel()(from_dlpack(fake_cuda_tensor(torch.zeros(64, dtype=torch.float32))))
        assert g.nvrtc.compiles == 1 and len(g.launches) == 1


# --------------------------------------------------------------------------- raw-pointer cp.async: the address decides

def _cp_async_raw_kernel():
    import cutelab as cute
    import cutelab as cutlass
    from cutelab.compat.experimental import wrappers as prims
    from cutelab.compat.experimental.memory import Array

    @cute.kernel
    def k(src: cute.Tensor, dst: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        smem = Array(cutlass.Float32, 64, space=cute.AddressSpace.smem, alignment=128)
        prims.cp_async_shared_global(smem.data_ptr() + tidx * 4, src.iterator.raw_ptr() + tidx * 4, 16, "cg")
        prims.cp_async_commit_group()
        prims.cp_async_wait_group(0)
        prims.barrier_cta_sync(0)
        dst[tidx] = smem[tidx * 4] + smem[tidx * 4 + 3]

    @cute.jit
    def host(src: cute.Tensor, dst: cute.Tensor):
        k(src, dst).launch(grid=(1, 1, 1), block=(16, 1, 1))

    return host


def test_raw_pointer_cp_async_is_aligned_as_its_address():
    """A tensor declared 4-byte aligned (from_dlpack's default) copied 16 bytes at a time through raw
    pointers: it runs where the address is 16-byte aligned, as on the GPU; a later launch of the same
    plan at a misaligned address, and a first one, are refused by name."""
    import torch
    from cutelab.errors import LaunchError, TraceError
    from cutelab.runtime import from_dlpack

    host = _cp_async_raw_kernel()
    buf = torch.arange(72, dtype=torch.float32)
    assert buf.data_ptr() % 16 == 0
    dst = torch.zeros(16, dtype=torch.float32)
    host(from_dlpack(buf[:64]), from_dlpack(dst))
    want = buf[:64].reshape(16, 4)
    assert torch.equal(dst, want[:, 0] + want[:, 3])
    with pytest.raises(LaunchError, match=r"src starts at 0x[0-9a-f]+, but the raw-pointer copy at .*"
                                          r"test_compat_primitives.py:\d+ needs it aligned to 16 bytes"):
        host(from_dlpack(buf[1:65]), from_dlpack(dst))  # the same plan (4-byte aligned, 64 elements)
    with pytest.raises(TraceError, match=r"the source of copy 0 is aligned to 4 bytes only"):
        _cp_async_raw_kernel()(from_dlpack(buf[1:65]), from_dlpack(dst))  # a first trace at that address


def test_byte_swizzle_places_data_where_the_swizzle_says():
    """cutlass.Swizzle (byte addresses): a cp.async to apply_swizzle's pointer lands at the swizzled
    bytes (read back unswizzled), load_swizzled undoes it, and arithmetic on the swizzled pointer
    is refused by name."""
    import torch
    import cutelab as cute
    import cutelab as cutlass
    from cutelab.compat.experimental import wrappers as prims
    from cutelab.compat.experimental.memory import Array
    from cutelab.compat.experimental.swizzle import Swizzle
    from cutelab.errors import TraceError
    from cutelab.runtime import from_dlpack

    sw = Swizzle.from_name("s128b")
    assert (sw.bbits, sw.mbase, sw.sshift) == (3, 4, 3) and sw(0x80) == 0x90 and sw(0x3F0) == 0x380

    @cute.kernel
    def k(src: cute.Tensor, raw: cute.Tensor, back: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        smem = Array(cutlass.Float32, 256, space=cute.AddressSpace.smem, alignment=1024)
        p = smem.data_ptr() + tidx * 4
        prims.cp_async_shared_global(p.apply_swizzle(sw), src.iterator.raw_ptr() + tidx * 4, 16, "cg")
        prims.cp_async_commit_group()
        prims.cp_async_wait_group(0)
        prims.barrier_cta_sync(0)
        (raw.iterator.raw_ptr() + tidx * 4).store(p.load(count=4))
        (back.iterator.raw_ptr() + tidx * 4).store(p.load_swizzled(sw, count=4))

    src = torch.arange(256, dtype=torch.float32)
    raw, back = torch.zeros(256), torch.zeros(256)
    k(from_dlpack(src, assumed_align=16), from_dlpack(raw, assumed_align=16),
      from_dlpack(back, assumed_align=16)).launch(grid=(1, 1, 1), block=(64, 1, 1))
    want = torch.zeros(256)
    for e in range(256):
        want[sw(e * 4) // 4] = src[e]
    assert not torch.equal(want, src) and torch.equal(raw, want) and torch.equal(back, src)

    @cute.kernel
    def bad(x: cute.Tensor):
        smem = Array(cutlass.Float32, 256, space=cute.AddressSpace.smem, alignment=1024)
        (smem.data_ptr().apply_swizzle(sw) + 4).store(cutlass.Float32(1.0))

    with pytest.raises(TraceError, match=r"on a pointer from cutlass.apply_swizzle"):
        bad(from_dlpack(raw)).launch(grid=(1, 1, 1), block=(1, 1, 1))


def _cp_async_mbar_kernel(noinc):
    import cutelab as cute
    import cutelab as cutlass
    from cutelab.compat.experimental import wrappers as prims
    from cutelab.compat.experimental.memory import Array

    @cute.kernel
    def k(src: cute.Tensor, dst: cute.Tensor, done: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        smem = Array(cutlass.Float32, 128, space=cute.AddressSpace.smem, alignment=128)
        mbar = Array(cutlass.Int64, 1, space=cute.AddressSpace.smem, alignment=8)
        if tidx == 0:
            prims.mbarrier_init(mbar, 32)
        prims.fence_mbarrier_init()
        prims.barrier_cta_sync(0)
        lane = tidx % 32
        if tidx < 32:
            prims.cp_async_shared_global(smem.data_ptr() + lane * 4, src.iterator.raw_ptr() + lane * 4, 16, "cg")
            prims.cp_async_mbarrier_arrive(mbar, noinc=noinc)
        prims.barrier_cta_sync(0)
        if tidx == 0:  # every copy has landed: the phase is complete with noinc only
            done[0] = cutlass.Int32(prims.mbarrier_try_wait_parity(mbar, 0, time_limit=0))
        prims.barrier_cta_sync(0)
        if tidx < 32:
            if not noinc:  # the instruction's own arrival is balanced: the thread arrives as well
                prims.mbarrier_arrive(mbar)
        else:
            while not prims.mbarrier_try_wait_parity(mbar, 0):
                pass
            (dst.iterator.raw_ptr() + lane * 4).store((smem.data_ptr() + lane * 4).load(count=4))

    @cute.jit
    def host(src: cute.Tensor, dst: cute.Tensor, done: cute.Tensor):
        k(src, dst, done).launch(grid=(1, 1, 1), block=(64, 1, 1))

    return host


@pytest.mark.parametrize("noinc", [True, False])
def test_cp_async_mbarrier_arrive_counts_only_with_noinc(noinc):
    """cp.async.mbarrier.arrive: the copies have landed when the phase completes; .noinc counts as
    the thread's arrival, without it the thread arrives itself (an extra arrival would be refused)."""
    import torch
    from cutelab.runtime import from_dlpack

    src, dst, done = torch.arange(128, dtype=torch.float32), torch.zeros(128), torch.full((1,), -1, dtype=torch.int32)
    _cp_async_mbar_kernel(noinc)(from_dlpack(src, assumed_align=16), from_dlpack(dst, assumed_align=16),
                                 from_dlpack(done))
    assert torch.equal(dst, src) and int(done[0]) == int(noinc)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc to compile the CUDA")
def test_cp_async_mbarrier_arrive_cuda_compiles_for_sm90(tmp_path):
    import torch
    from cutelab.kernel.cuda.fakegpu import fake_cuda_tensor, fake_gpu
    from cutelab.kernel.launch.plan import last_launch
    from cutelab.runtime import from_dlpack

    with fake_gpu(arch=(9, 0), nvcc=shutil.which("nvcc"), cache_dir=str(tmp_path)) as g:
        _cp_async_mbar_kernel(True)(from_dlpack(fake_cuda_tensor(torch.arange(128, dtype=torch.float32)),
                                                assumed_align=16),
                                    from_dlpack(fake_cuda_tensor(torch.zeros(128)), assumed_align=16),
                                    from_dlpack(fake_cuda_tensor(torch.zeros(1, dtype=torch.int32))))
        assert g.nvrtc.compiles == 1 and len(g.launches) == 1
        assert "cp.async.mbarrier.arrive.noinc.shared::cta.b64" in last_launch().source


def _dsmem_red_kernel():
    import cutelab as cute
    import cutelab as cutlass
    from cutelab.compat.experimental import wrappers as prims
    from cutelab.compat.experimental.memory import Array

    @cute.kernel
    def k(out: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        rank = cute.arch.block_idx_in_cluster()
        acc = Array(cutlass.Int32, 2, space=cute.AddressSpace.smem)
        if tidx < 2:
            acc[tidx] = cutlass.Int32(0)
        prims.barrier_cluster_arrive()
        prims.barrier_cluster_wait()
        root = prims.mapa(acc.data_ptr(), cutlass.Int32(0))
        prims.red("add", "s32", root, tidx + 1, mem_order=prims.MemOrder.RELAXED, mem_scope=prims.MemScope.CLUSTER)
        prims.red("max", "s32", root + 1, tidx * (rank + 1))
        prims.barrier_cluster_arrive()
        prims.barrier_cluster_wait()
        if tidx < 2:
            out[rank * 2 + tidx] = acc[tidx]

    @cute.jit
    def host(out: cute.Tensor):
        k(out).launch(grid=(2, 1, 1), block=(32, 1, 1), cluster=(2, 1, 1))

    return host


def test_red_through_mapa_reduces_into_the_peer_ctas_shared_memory():
    """prims.red on a prims.mapa pointer: red.shared::cluster into rank 0's array from both CTAs."""
    import torch
    from cutelab.runtime import from_dlpack

    out = torch.full((4,), -1, dtype=torch.int32)
    _dsmem_red_kernel()(from_dlpack(out))
    # rank 0's acc[0]: 1..32 added by each CTA; acc[1]: the max of tidx * (rank + 1); rank 1's array untouched
    assert out.tolist() == [2 * sum(range(1, 33)), 62, 0, 0]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc to compile the CUDA")
def test_red_through_mapa_cuda_compiles_for_sm90(tmp_path):
    import torch
    from cutelab.kernel.cuda.fakegpu import fake_cuda_tensor, fake_gpu
    from cutelab.kernel.launch.plan import last_launch
    from cutelab.runtime import from_dlpack

    with fake_gpu(arch=(9, 0), nvcc=shutil.which("nvcc"), cache_dir=str(tmp_path)) as g:
        _dsmem_red_kernel()(from_dlpack(fake_cuda_tensor(torch.zeros(4, dtype=torch.int32))))
        assert g.nvrtc.compiles == 1 and len(g.launches) == 1
        src = last_launch().source
    assert "red.relaxed.cluster.shared::cluster.add.s32" in src and "red.shared::cluster.max.s32" in src


# --------------------------------------------------------------------------- ldmatrix / stmatrix (m8n8, b16)

def _ldmatrix_kernel():
    import cutelab as cute
    import cutelab as cutlass
    from cutelab.compat.experimental import matrix
    from cutelab.compat.experimental import wrappers as prims
    from cutelab.compat.experimental.memory import Array

    @cute.kernel
    def k(src: cute.Tensor, out: cute.Tensor):
        t, _, _ = cute.arch.thread_idx()
        smem = Array(cutlass.Float16, 512, space=cute.AddressSpace.smem, alignment=128)
        for j in range(16):
            smem[t * 16 + j] = src[t * 16 + j]
        prims.barrier_cta_sync(0)
        row = smem.data_ptr() + (31 - t) * 16 + 8  # lane t: the second half of row 31 - t
        a = matrix.ldmatrix(row, 4, prims.MMALayout.ROW)
        b = matrix.ldmatrix(row, 4, prims.MMALayout.COL)
        for i in range(4):
            out[t * 8 + i] = a[i]
            out[t * 8 + 4 + i] = b[i]
        prims.barrier_cta_sync(0)
        matrix.stmatrix(row, a, prims.MMALayout.COL)  # back transposed: each 8x8 matrix in place, transposed
        prims.barrier_cta_sync(0)
        for j in range(16):
            src[t * 16 + j] = smem[t * 16 + j]

    @cute.jit
    def host(src: cute.Tensor, out: cute.Tensor):
        k(src, out).launch(grid=(1, 1, 1), block=(32, 1, 1))

    return host


def test_ldmatrix_and_stmatrix_follow_the_lanes_row_addresses():
    """Lane t hands in row 31 - t (its second half): matrix i's row r is the row of lane 8i + r. Register
    word i of lane t holds elements (t // 4, 2 (t % 4)) and (.., + 1) of matrix i, low half first; .trans
    (COL) elements (2 (t % 4), t // 4) and (2 (t % 4) + 1, t // 4); stmatrix .trans of the ROW words
    writes each matrix back transposed."""
    import torch
    from cutelab.runtime import from_dlpack

    src = torch.randn(512).to(torch.float16)
    s = src.numpy().copy()
    out = torch.zeros(256, dtype=torch.int32)
    _ldmatrix_kernel()(from_dlpack(src), from_dlpack(out))
    bits = s.view(np.uint16).astype(np.int64)
    mats = [np.array([bits[(31 - (8 * i + r)) * 16 + 8: (31 - (8 * i + r)) * 16 + 16] for r in range(8)])
            for i in range(4)]
    want = np.zeros((32, 8), dtype=np.int64)
    for t in range(32):
        for i in range(4):
            m = mats[i]
            want[t, i] = m[t // 4, 2 * (t % 4)] | (m[t // 4, 2 * (t % 4) + 1] << 16)
            want[t, 4 + i] = m[2 * (t % 4), t // 4] | (m[2 * (t % 4) + 1, t // 4] << 16)
    assert (out.numpy().astype(np.int64).reshape(32, 8) & 0xFFFFFFFF).tolist() == want.tolist()
    back = s.copy()
    for i in range(4):
        mt = s.reshape(32, 16)[[31 - (8 * i + r) for r in range(8)], 8:].T
        for r in range(8):
            back[(31 - (8 * i + r)) * 16 + 8: (31 - (8 * i + r)) * 16 + 16] = mt[r]
    assert src.numpy().tolist() == back.tolist()


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc to compile the CUDA")
def test_ldmatrix_cuda_compiles_for_sm90(tmp_path):
    import torch
    from cutelab.kernel.cuda.fakegpu import fake_cuda_tensor, fake_gpu
    from cutelab.runtime import from_dlpack

    with fake_gpu(arch=(9, 0), nvcc=shutil.which("nvcc"), cache_dir=str(tmp_path)) as g:
        _ldmatrix_kernel()(from_dlpack(fake_cuda_tensor(torch.zeros(512, dtype=torch.float16))),
                           from_dlpack(fake_cuda_tensor(torch.zeros(256, dtype=torch.int32))))
        assert g.nvrtc.compiles == 1 and len(g.launches) == 1


def test_narrow_ldmatrix_is_refused_by_name(tmp_path):
    p = run(tmp_path, """
        import cutlass
        import cutlass.cute as cute
        from cutlass.experimental import primitives as prims

        @cute.kernel
        def k():
            smem = cutlass.Array(cutlass.Uint8, 512, space=cutlass.AddressSpace.smem, alignment=128)
            prims.ldmatrix(smem, 2, prims.MMALayout.COL, shape=prims.LoadShape.M16N16,
                           src_format=prims.LoadSrcFormat.B8)

        @cute.jit
        def host():
            k().launch(grid=(1, 1, 1), block=(32, 1, 1))

        host()
    """)
    assert p.returncode != 0
    assert "prims.ldmatrix(shape=m16n16, src_format=b8) is not emulated by cutelab" in p.stderr and "prog.py:9" in p.stderr


_EXIT = """
    import torch
    import cutlass
    import cutlass.cute as cute
    from cutlass.experimental import primitives as prims

    @cute.kernel
    def k(out: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        warp = cute.arch.warp_idx()
        bar = cutlass.Array(cutlass.Int64, 1, space=cutlass.AddressSpace.smem)
        if tidx == 0:
            prims.mbarrier_init(bar, 1)
        prims.fence_mbarrier_init()
        prims.barrier_cta_sync(0)
{body}
        prims.barrier_cta_sync(0)
        out[tidx] = out[tidx] + 1

    @cute.jit
    def host(out: cute.Tensor):
        k(out).launch(grid=(1, 1, 1), block=(64, 1, 1))

    out = torch.zeros(64, dtype=torch.int32, device="cuda")
    host(cute.runtime.from_dlpack(out))
    print(out.tolist())
"""

# warp 1 exits: the barrier after waits only for warp 0, which alone adds 1
_EXIT_PLAIN = """
        if warp == 1:
            prims.exit()
"""
# warp 0 waits on an mbarrier (so the if forks the warps into two groups), warp 1 arrives on it and exits
_EXIT_FORKED = """
        if warp == 0:
            while not prims.mbarrier_try_wait_parity(bar, 0):
                pass
            out[tidx] = 7
        else:
            if tidx == 32:
                prims.mbarrier_arrive(bar)
            prims.exit()
"""
# warp 1 exits without arriving: warp 0's wait can never complete
_EXIT_DEADLOCK = """
        if warp == 0:
            while not prims.mbarrier_try_wait_parity(bar, 0):
                pass
        else:
            prims.exit()
"""


@pytest.mark.parametrize("body,want", [(_EXIT_PLAIN, [1] * 32 + [0] * 32), (_EXIT_FORKED, [8] * 32 + [0] * 32)],
                         ids=["lock-step", "forked"])
def test_exit_leaves_the_kernel_and_the_barriers(tmp_path, body, want):
    """prims.exit (kernel/instr/thread_exit.py): the exiting warp writes nothing more and the CTA barrier after
    it completes with the threads left, in lock-step and when the warps run as separate groups."""
    p = run(tmp_path, _EXIT.replace("{body}", textwrap.indent(textwrap.dedent(body), " " * 8)))
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.strip().splitlines()[-1] == str(want)


def test_exit_without_the_arrival_a_wait_needs_is_a_deadlock(tmp_path):
    """An mbarrier is not completed for a thread that exited: the waiting warp's deadlock is reported."""
    p = run(tmp_path, _EXIT.replace("{body}", textwrap.indent(textwrap.dedent(_EXIT_DEADLOCK), " " * 8)))
    assert p.returncode != 0
    # the exited warp's group has finished; warp 0 is left waiting (nothing hangs)
    assert "k: deadlock: every warp that has not finished waits" in p.stderr, p.stderr[-3000:]
    assert "(1 group(s) of warps have finished)" in p.stderr, p.stderr[-3000:]


_TC_BAD = """
    import torch
    import cutlass
    import cutlass.cute as cute
    from cutlass.experimental import primitives as prims

    @cute.kernel
    def k(out: cute.Tensor):
        a = cutlass.Array(cutlass.Float16, (128, 64), space=cutlass.AddressSpace.smem)
        w = cutlass.Array(cutlass.Int32, 1, space=cutlass.AddressSpace.smem)
        bar = cutlass.Array(cutlass.Int64, 1, space=cutlass.AddressSpace.smem)
        prims.tcgen05_alloc(w, 128)
        prims.barrier_cta_sync(0)
        tmem = prims.make_tmem_ptr(w.load(), cutlass.Float32)
        {line}
        prims.tcgen05_dealloc(tmem, 128)

    @cute.jit
    def host(out: cute.Tensor):
        k(out).launch(grid=(1, 1, 1), block=(128, 1, 1))

    host(cute.runtime.from_dlpack(torch.zeros(4, device="cuda")))
"""


@pytest.mark.parametrize("line,err", [
    ('v = prims.tcgen05_ld("16x32bx2", tmem, num=2)',
     "tcgen05_ld('16x32bx2', ..., num=2): the 16x32bx2 shape needs offset="),
    ('v = prims.tcgen05_ld("32x32b", tmem, num=2, pack=True)', "pack=True moves 16-bit elements, the TMEM Array "
                                                              "holds Float32"),
    ('prims.tcgen05_cp(prims.Tcgen05CpShape.SHAPE_64X128B, tmem, prims.Tcgen05SmemDesc.build(a, 16, 128))',
     "rule: shape 64x128b takes multicast in ('warpx2_02_13', 'warpx2_01_23'), got None"),
    ('prims.tcgen05_alloc(w, 48)', "48 columns; rule: a tensor-memory allocation is a power of two"),
    ('d = prims.Tcgen05SmemDesc.build(a, 16, 1024, layout=2); prims.tcgen05_mma(prims.Tcgen05MMAKind.F16, '
     'prims.CTAGroup.CTA_1, tmem, d, d, prims.Tcgen05InstrDesc.build(c_dtype=cutlass.Float32, a_major=1, n_dim=64, '
     'm_dim=128), False)', "MN-major operands (a_major/b_major = 1) are not supported by cutelab's tcgen05_mma"),
], ids=["ld-16x32bx2-offset", "ld-pack-32bit", "cp-multicast", "alloc-columns", "mma-mn-major"])
def test_tcgen05_primitives_refuse_what_cutelab_does_not_run(tmp_path, line, err):
    p = run(tmp_path, _TC_BAD.replace("{line}", line), env={"CUTE_DSL_ARCH": "sm_100a"})
    assert p.returncode != 0
    assert err in p.stderr, p.stderr[-3000:]
    assert "prog.py:15" in p.stderr, p.stderr[-3000:]  # the user's line


def test_tcgen05_descriptor_layouts_of_tensor_map_and_byte_swizzles():
    """Tcgen05SmemDesc.build(layout=...) takes the SM100 code, a cuda.TensorMapSwizzle or a cutlass.Swizzle, as
    the DSL converts them (128B -> 2, 64B -> 4, 32B -> 6): a TensorMapSwizzle.s64b (2) is not read as code 2."""
    from cutelab.compat.experimental.swizzle import Swizzle
    from cutelab.compat.experimental.tcgen05_mma import _layout_code
    from cutelab.compat.experimental.tensor_map import TensorMapSwizzle as T

    got = [_layout_code(x, "w") for x in (T.none, T.s32b, T.s64b, T.s128b, 2, 4, Swizzle(3, 4, 3), Swizzle(1, 4, 3))]
    assert got == [0, 6, 4, 2, 2, 4, 2, 6]


_TC_CP = """
    import numpy as np
    import torch
    import cutlass
    import cutlass.cute as cute
    from cutlass.experimental import primitives as prims

    SHAPE, MULTICAST = {mode}

    @cute.kernel
    def k(out: cute.Tensor):
        tx, _, _ = cute.arch.thread_idx()
        warp = tx // 32
        lane = tx % 32
        vals = cutlass.Array(cutlass.Float32, 1024, space=cutlass.AddressSpace.smem, alignment=16)
        w = cutlass.Array(cutlass.Int32, 1, space=cutlass.AddressSpace.smem)
        bar = cutlass.Array(cutlass.Int64, 1, space=cutlass.AddressSpace.smem)
        for i in cutlass.range_constexpr(8):
            vals[tx * 8 + i] = cutlass.Float32(tx * 8 + i)
        if tx == 0:
            prims.mbarrier_init(bar, 1)
        prims.fence_mbarrier_init()
        if warp == 0:
            prims.tcgen05_alloc(w, 32)
        prims.barrier_cta_sync(0)
        prims.fence_proxy(prims.Proxy.ASYNC_SHARED, space=prims.SharedSpace.shared_cta)
        base = w.load()
        tmem = cutlass.inttoptr(base, 6, cutlass.Float32)
        # K-major, no swizzle: row r's first 16 bytes at 16 r, its second 16 bytes (256b shapes) 2048 bytes on
        desc = prims.Tcgen05SmemDesc.build(vals, leading_byte_offset=2048, stride_byte_offset=128)
        if warp == 0:
            if prims.elect_sync():
                prims.tcgen05_cp(SHAPE, tmem, desc, multicast=MULTICAST)
                prims.tcgen05_commit(bar)
        while not prims.mbarrier_try_wait_parity(bar, 0):
            pass
        got = prims.tcgen05_ld("32x32b", prims.TmemAddr.from_row_col(warp * 32, base & 0xFFFF).as_ptr(cutlass.Float32),
                               num=8)
        prims.tcgen05_wait(prims.Tcgen05Wait.LOAD)
        for i in cutlass.range_constexpr(8):
            (out.iterator.raw_ptr() + tx * 8 + i).store(got[i])
        prims.tcgen05_fence(prims.Tcgen05Fence.BEFORE_THREAD_SYNC)
        prims.barrier_cta_sync(0)
        if warp == 0:
            prims.tcgen05_dealloc(tmem, 32)

    @cute.jit
    def host(out: cute.Tensor):
        k(out).launch(grid=(1, 1, 1), block=(128, 1, 1))

    out = torch.full((128, 8), -1.0, device="cuda")
    host(cute.runtime.from_dlpack(out))
    np.save("out.npy", out.cpu().numpy())
"""

# (mode, rows, 32-bit columns, TMEM lanes of row r): the tcgen05.cp shapes as the PTX ISA places them
_CP_MODES = {
    "S2T_128x256b": (128, 8, lambda r: [r]), "S2T_128x128b": (128, 4, lambda r: [r]),
    "S2T_4x256b": (4, 8, lambda r: [32 * r]),
    "S2T_64x128b_WARPX2_02_13": (64, 4, lambda r: [r, r + 64]),
    "S2T_64x128b_WARPX2_01_23": (64, 4, lambda r: [64 * (r // 32) + r % 32, 64 * (r // 32) + r % 32 + 32]),
    "S2T_32x128b_WARPX4": (32, 4, lambda r: [r, r + 32, r + 64, r + 96]),
}


@pytest.mark.parametrize("mode", sorted(_CP_MODES))
def test_tcgen05_cp_places_descriptor_rows_in_tmem_lanes(tmp_path, mode):
    """tcgen05_cp of each S2TCopyMode, completed by tcgen05_commit and an mbarrier wait, then read back with
    tcgen05_ld: row r of the descriptor's tile (element k of its 16-byte chunk c at float 4 r + 512 c + k) lands
    in each of the shape's lanes for r, columns 0 to 3 (7); nothing else is written."""
    p = run(tmp_path, _TC_CP.replace("{mode}", f"prims.S2TCopyMode.{mode}"), env={"CUTE_DSL_ARCH": "sm_100a"})
    assert p.returncode == 0, p.stderr[-3000:]
    got = np.load(tmp_path / "out.npy")
    rows, cols, lanes = _CP_MODES[mode]
    want = np.zeros((128, 8), dtype=np.float32)
    for r in range(rows):
        for ln in lanes(r):
            want[ln, :cols] = [4 * r + 512 * (c // 4) + c % 4 for c in range(cols)]
    np.testing.assert_array_equal(got, want)


def test_cluster_tmem_reduce_reads_tmem_before_its_copy_completes(tmp_path):
    """CUTLASS's reduction/cluster_tmem_reduce.py (stored unchanged) issues
    tcgen05_cp and reads the columns with tcgen05_ld after only tcgen05_wait(STORE), which orders tcgen05.st, not
    tcgen05.cp (whose completion a tcgen05.commit and a wait on its mbarrier track): the interpreter reports the
    race with both lines instead of reading the columns before the copy."""
    from compat_helpers import SRC

    env = dict(os.environ, PYTHONPATH=SRC, PYTHONHASHSEED="0", CUTE_DSL_ARCH="sm_100a")
    p = subprocess.run([sys.executable, "-m", "cutelab", "run", os.path.join(PRIMS, BREAKING[0] + ".py")],
                       cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode != 0
    err = p.stderr
    assert "cluster_tmem_reduce.py:260): tcgen05.ld" in err, err[-3000:]
    assert re.search(r"tcgen05\.cp\.128x128b issued at \S*cluster_tmem_reduce\.py:238 writes and no tcgen05\.commit "
                     r"has completed", err), err[-3000:]
    assert "only after a tcgen05.commit of them and a wait on its mbarrier" in err
