#!/usr/bin/env python3
"""Golden text for printing inside jit functions and kernels: what CuTe DSL 4.8.1 prints (at trace
time with print(), at run time with cute.printf on the host) for small programs.

    /work/dslenv/bin/python scripts/make_golden_print.py   # writes tests/golden/print_kernel.json

Each case is a body of statements, run in one of two wrappers (see WRAPPERS):
  * "kernel": the body of a @cute.kernel (names: g, a (64,64) f32 tensor argument; tidx), launched
    with 32 threads from a @cute.jit function. Without a GPU the DSL traces the kernel (its print()s
    run) and then fails to launch; the output is what was printed before.
  * "host": the body of a @cute.jit function of g, a (4096) f16 tensor (host code only).
  * "jit": the body of a @cute.jit function of two Int32 arguments a and b (dynamic: print shows '?'),
    called with the case's values.
Every case runs in its own subprocess (the DSL can crash the interpreter). tests/test_print_golden.py
runs the same programs on cutelab (imports rewritten as tests/programs/harness.py does) and compares.
This script does not import cutelab.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "tests", "golden", "print_kernel.json")

HEAD = """import numpy as np
import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack


@cute.struct
class St:
    a: cute.struct.Align[cute.struct.MemRange[cutlass.Float16, 1024], 1024]
"""

WRAPPERS = {
    "kernel": """
@cute.kernel
def kern_{i}(g: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
{body}


@cute.jit
def host_{i}(g: cute.Tensor):
    kern_{i}(g).launch(grid=(1, 1, 1), block=(32, 1, 1))


try:
    host_{i}(from_dlpack(np.zeros((64, 64), np.float32)))
except Exception as e:  # no GPU: the launch fails after the trace
    if "cuda" not in type(e).__name__.lower() and "cuda" not in str(e).lower():
        raise
""",
    "host": """
@cute.jit
def host_{i}(g: cute.Tensor):
{body}


host_{i}(from_dlpack(np.zeros(4096, np.float16)))
""",
    "jit": """
@cute.jit
def jit_{i}(a: cutlass.Int32, b: cutlass.Int32):
{body}


jit_{i}(cutlass.Int32({a}), cutlass.Int32({b}))
""",
}

_SW = """    smem = cutlass.utils.SmemAllocator()
    s = smem.allocate_tensor(cutlass.Float16, cute.make_composed_layout(cute.make_swizzle(3, 3, 3), 0,
                             cute.make_layout((8, 64), stride=(64, 1))), 16)
    s3 = smem.allocate_tensor(cutlass.Float16, cute.make_composed_layout(cute.make_swizzle(3, 4, 3), 0,
                              cute.make_layout(((8, 8), (8, 2)), stride=((64, 8), (1, 512)))), 128)
    s2 = smem.allocate_tensor(cutlass.Float32, cute.make_composed_layout(cute.make_swizzle(2, 4, 3), 0,
                              cute.make_layout((16, 32), stride=(32, 1))), 16)
"""

CASES = [
    # register tensors: make_rmem_tensor (and what is built on it) is 32-byte aligned; MMA fragments 16
    ("rmem_align", "kernel", """
    gt = cute.local_tile(g, (8, 16), (0, 0))
    print("a", cute.make_fragment_like(gt))
    print("b", cute.make_rmem_tensor_like(gt, cutlass.Float16))
    print("c", cute.make_fragment_like(gt[(None, 0)]))
    print("g", cute.make_rmem_tensor((4, 3), cutlass.Float64))
    print("i", cute.make_rmem_tensor((3,), cutlass.Float16), cute.make_rmem_tensor((1,), cutlass.Int8))
    print("h", cute.make_rmem_tensor((4, 3), cutlass.Float32)[(None, 1)], cute.make_rmem_tensor((8, 3), cutlass.Float16)[(None, 1)])
    print("j", cute.make_rmem_tensor((4, 2), cutlass.Float32)[(1, None)], cute.make_rmem_tensor((16, 2), cutlass.Int8)[(None, 1)])
    print("t", cute.make_rmem_tensor((4, 16), cutlass.Boolean).type)
    print("u", cute.make_rmem_tensor((4, 16), cutlass.Boolean), cute.make_rmem_tensor((4, 16), cutlass.Boolean)[(1, None)])
""", None),
    ("rmem_align_mma", "kernel", """
    tm = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(cutlass.Float16, cutlass.Float32, (16, 8, 16)))
    thr = tm.get_slice(tidx)
    print("d", tm.make_fragment_A(thr.partition_A(cute.make_rmem_tensor(cute.make_layout((16, 16)), cutlass.Float16))))
    print("f", tm.make_fragment_C(thr.partition_shape_C((16, 8))))
""", None),
    # swizzled shared memory: the tensor's layout is the composed layout; slices decay as CuTe's
    # slice_and_offset does
    ("smem_swizzle", "kernel", _SW + """
    print("s", s)
    print("s3", s3)
    print("s2", s2)
    print("t", s.type)
    print("u", s[(None, 3)].type, cute.local_tile(s, (8, 16), (0, 1)).type)
""", None),
    ("smem_swizzle_slice", "kernel", _SW + """
    print("a", s[(None, 3)])
    print("b", s[(2, None)])
    print("k", s2[(None, 1)])
    print("l", s2[(5, None)])
    print("o", s3[((None, 0), None)])
    print("p", s3[(None, (None, 1))])
    print("q", s3[(3, (2, None))])
    print("e", s[(None, 0)], s[(1, None)], s[(0, None)], s[(7, None)])
""", None),
    ("smem_swizzle_tile", "kernel", _SW + """
    print("f", cute.local_tile(s, (8, 16), (0, 1)))
    print("h", cute.zipped_divide(s, (8, 8)))
    print("i", cute.logical_divide(s, (None, 8)))
    print("m", cute.local_tile(s3, (16, 16), (1, 0)))
""", None),
    ("smem_swizzle_thread", "kernel", _SW + """
    print("c", s[(tidx, None)])
    print("f", cute.local_tile(s, (8, 16), (0, tidx)))
    print("g", cute.local_partition(s, cute.make_layout((4, 8)), tidx))
    print("n", cute.local_partition(s2, cute.make_layout((4, 8), stride=(8, 1)), tidx))
""", None),
    # the coordinate's range: CuTe DSL takes the sliced mode's whole extent (64 columns, 16 rows), not
    # the thread index's (tidx < 32): the run-time bits of the offset are those the mode can set
    ("smem_swizzle_thread_range", "kernel", _SW + """
    print("d", s[(None, tidx)])
    print("m", cute.local_partition(s2, cute.make_layout((16, 8), stride=(8, 1)), tidx))
""", None),
    # a host tensor over a swizzled layout (make_tensor of a pointer): its slices as CuTe DSL holds them
    ("host_swizzle_slice", "host", """
    t = cute.make_tensor(g.iterator, cute.make_composed_layout(cute.make_swizzle(3, 3, 3), 0,
                         cute.make_layout((8, 64), stride=(64, 1))))
    print("t", t)
    print("a", t[(None, 3)], t[(2, None)])
    print("f", cute.local_tile(t, (8, 16), (0, 1)))
    print("e", t[(1, None)], t[(0, None)])
    u = cute.make_tensor(g.iterator, cute.make_composed_layout(cute.make_swizzle(3, 4, 3), 0,
                         cute.make_layout(((8, 8), (8, 2)), stride=((64, 8), (1, 512)))))
    print("o", u[((None, 0), None)], u[(None, (None, 1))])
    print("q", u[(3, (2, None))], u[((1, 2), None)])
""", None),
    # a swizzled pointer (a struct field's get_tensor with a byte swizzle): CuTe DSL keeps the swizzle in the
    # pointer's type and slices the layout as a plain one
    ("smem_swizzled_pointer", "kernel", """
    smem = cutlass.utils.SmemAllocator()
    st = smem.allocate(St)
    t = st.a.get_tensor(cute.make_layout((16, 64), stride=(64, 1)), swizzle=cute.make_swizzle(3, 4, 3))
    print("p", t)
    print("q", t[(None, 3)], t[(2, None)], t[(tidx % 16, None)])
    print("r", t.type)
""", None),
    # composition over dynamic modes: CuTe's fold, one result mode per dynamic left mode
    ("dyn_composition", "jit", """
    L = cute.make_layout((a * 8, 4, 2))
    print("L", L)
    for R in [cute.make_layout(16, stride=2), cute.make_layout(4, stride=16), cute.make_layout((4, 2), stride=(1, 4)),
              cute.make_layout(8, stride=1), cute.make_layout(1, stride=3), cute.make_layout(3, stride=0)]:
        print(R, "->", cute.composition(L, R))
    L2 = cute.make_layout((8, 4), stride=(a * 8, 1))
    print("L2", L2, cute.composition(L2, cute.make_layout(4, stride=2)), cute.composition(L2, cute.make_layout((2, 4))))
    L3 = cute.make_layout((a, b))
    print("L3", L3, cute.composition(L3, cute.make_layout(4, stride=2)), cute.composition(L3, (2, 2)),
          cute.composition(L3, cute.make_layout(b)))
    print("L4", cute.composition(cute.make_layout(a, stride=2), cute.make_layout((2, 3), stride=(3, 1))),
          cute.composition(cute.make_layout((4, 8)), cute.make_layout(a, stride=b)))
    print("L5", cute.composition(cute.make_layout((4, 8)), cute.make_layout((a, 2), stride=(2, b))))
    print("div", cute.logical_divide(L3, (2, 2)), cute.zipped_divide(cute.make_layout((8, a)), (4, 2)))
    cute.printf("{} {}", cute.composition(L, cute.make_layout(16, stride=2)), cute.composition(L3, cute.make_layout(4, stride=2)))
""", (8, 4)),
    ("dyn_composition_2", "jit", """
    A = cute.make_layout((a, b), stride=(b * 2, 1))
    print("A", A, cute.composition(A, cute.make_layout((2, 2), stride=(1, 2))), cute.composition(A, cute.make_layout(6, stride=1)))
    B = cute.make_layout((a, 2), stride=(1, a))
    print("B", cute.composition(B, cute.make_layout(4, stride=3)), cute.composition(B, cute.make_layout((3, 2), stride=(1, 6))))
    cute.printf("{} {}", cute.composition(A, cute.make_layout((2, 2), stride=(1, 2))), cute.composition(B, cute.make_layout(4, stride=3)))
""", (6, 4)),
]


def program(i, kind, body, values):
    a, b = values or (0, 0)
    body = "\n".join(ln for ln in body.strip("\n").split("\n"))
    return HEAD + WRAPPERS[kind].format(i=i, body=body, a=a, b=b)


def run(src):
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(src)
        path = f.name
    env = dict(os.environ, CUTE_DSL_ARCH="sm_90a", PYTHONHASHSEED="0")
    env.pop("PYTHONPATH", None)
    try:
        p = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=300, cwd="/tmp", env=env)
    finally:
        os.unlink(path)
    return p.returncode, p.stdout, p.stderr


def main():
    out = []
    for i, (name, kind, body, values) in enumerate(CASES):
        rc, stdout, stderr = run(program(i, kind, body, values))
        rec = {"name": name, "kind": kind, "body": body, "values": values, "output": stdout}
        if rc:
            rec["failed"] = stderr.strip().splitlines()[-1] if stderr.strip() else f"exit {rc}"
        out.append(rec)
        print(name, "FAILED " + rec["failed"] if rc else "ok", file=sys.stderr)
    with open(OUT, "w") as f:
        json.dump({"dsl_version": "4.8.1", "generator": "scripts/make_golden_print.py", "cases": out}, f, indent=1)
    print("wrote", OUT, file=sys.stderr)


if __name__ == "__main__":
    main()
