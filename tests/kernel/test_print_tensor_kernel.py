"""cute.print_tensor inside kernels prints CuTe DSL's print_tensor text (the host's, cutelab.tensor.format_tensor)
on both back ends: the CPU interpreter's output is compared with the host text of the same data, and the CUDA
printer's printf (taken from the source a GPU launch would compile, under fake_gpu) is applied, with C's
conversions, to the same values and compared with the interpreter's output."""
import re
import shutil

import numpy as np
import pytest

import cutelab as cute
from cutelab import Float16, Float32
from cutelab.kernel.cuda.fakegpu import FakeDeviceArray, fake_gpu
from cutelab.runtime import from_dlpack
from cutelab.tensor import format_tensor


@cute.kernel
def whole(A: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    if tidx == 0:
        cute.print_tensor(A)


@cute.kernel
def whole_verbose(A: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    if tidx == 0:
        cute.print_tensor(A, verbose=True)


@cute.kernel
def per_thread_row(A: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    cute.print_tensor(A[(tidx, None)])


@cute.kernel
def in_registers(A: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    r = cute.make_rmem_tensor(A.shape, A.element_type)
    r.store(A.load())
    if tidx == 0:
        cute.print_tensor(r)
        cute.print_tensor(A.load() * 2)  # a value: stored into a fresh register tensor, then printed


def _norm(text):
    return re.sub(r"0x[0-9a-f]{16}", "0xADDR", text)


ARRAYS = {
    "f32_3d": np.arange(24, dtype=np.float32).reshape(4, 3, 2) - 7.5,
    "f32_1d_elided": np.linspace(-2, 2, 9, dtype=np.float32),
    "f16_2d_elided": (np.arange(80, dtype=np.float16).reshape(8, 10) / 4),
    "i32_2d": np.array([[1, -2, 3], [-400, 5, 60]], np.int32),
    "u32_1d": np.arange(5, dtype=np.uint32) * 1000000000,
    "i8_2d": np.array([[-128, 7], [127, 0]], np.int8),
}


@pytest.mark.parametrize("name", sorted(ARRAYS))
def test_whole_tensor_prints_as_on_the_host(name, capsys):
    a = ARRAYS[name]
    whole(from_dlpack(a)).launch(grid=1, block=32)
    out = capsys.readouterr().out
    assert _norm(out) == _norm(format_tensor(from_dlpack(a))) + "\n"


def test_verbose_lists_every_coordinate(capsys):
    a = ARRAYS["i32_2d"]
    whole_verbose(from_dlpack(a)).launch(grid=1, block=32)
    out = _norm(capsys.readouterr().out)
    assert out == ("tensor(raw_ptr(0xADDR: i32, generic, align<4>) o (2,3):(3,1), data= (\n\t(0,0)= 1\n\t(1,0)=-400\n"
                   "\t(0,1)=-2\n\t(1,1)= 5\n\t(0,2)= 3\n\t(1,2)= 60\n)\n")
    assert out == _norm(format_tensor(from_dlpack(a), verbose=True)) + "\n"


def test_every_thread_prints_its_row(capsys):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    per_thread_row(from_dlpack(a)).launch(grid=1, block=3)
    out = _norm(capsys.readouterr().out)
    rows = [_norm(format_tensor(from_dlpack(a)[(i, None)])) for i in range(3)]
    assert out == "".join(r + "\n" for r in rows)
    assert "align<4>) o (4):(1), data=\n       [ 4.000000, ],\n" in rows[1]


def test_register_tensor_and_value(capsys):
    a = ARRAYS["f16_2d_elided"][:3, :4].copy()
    in_registers(from_dlpack(a)).launch(grid=1, block=32)
    out = _norm(capsys.readouterr().out)
    r = cute.make_rmem_tensor(cute.make_layout(a.shape), Float16)
    r.store(from_dlpack(a).load())
    first = _norm(format_tensor(r))
    # f16 values times 2 are Float32 values (CuTe DSL 4.8.1 promotes a Python operand to Int32/Float32)
    r32 = cute.make_rmem_tensor(cute.make_layout(a.shape), Float32)
    r32.store(from_dlpack(a).load() * 2)
    second = _norm(format_tensor(r32))
    assert first.startswith("tensor(raw_ptr(0xADDR: f16, rmem, align<32>) o (3,4):(1,3), data=")
    assert out == first + "\n" + second + "\n"


# ---------------------------------------------------------------------------- the CUDA printer's printf

def _c_printf(fmt, args):
    """C's printf for the conversions print_tensor uses (values given as Python numbers)."""
    out, k = [], 0
    for piece in re.split(r"(%016llx|% f|% d|%u|%lld|%llu)", fmt):
        if piece in ("% f", "% d", "%u", "%016llx", "%lld", "%llu"):
            v = args[k]
            k += 1
            py = {"% f": "% f", "% d": "% d", "%u": "%d", "%lld": "%d", "%llu": "%d", "%016llx": "%016x"}[piece]
            out.append(py % v)
        else:
            out.append(piece)
    assert k == len(args)
    return "".join(out)


def _cuda_source(kernel, arr):
    nvcc = shutil.which("nvcc")
    with fake_gpu(nvcc=nvcc) as g:
        seen = []
        orig = g.nvrtc.nvrtcCreateProgram
        g.nvrtc.nvrtcCreateProgram = lambda src, *a: (seen.append(src), orig(src, *a))[1]
        kernel(from_dlpack(FakeDeviceArray(arr))).launch(grid=1, block=32)  # compiled with nvcc too, if found
    return seen[-1].decode()


@pytest.mark.parametrize("name", ["f32_3d", "u32_1d", "i8_2d", "f16_2d_elided"])
def test_cuda_printf_prints_the_interpreters_text(name, capsys):
    a = ARRAYS[name]
    src = _cuda_source(whole, a)
    calls = re.findall(r'printf\("(.*?)"((?:, [^;]*)?)\);', src)  # long ones are split into several printfs
    assert calls
    fmt = "".join(f for f, _ in calls).encode().decode("unicode_escape")
    n_vals = len(re.findall(r"% f|% d|%u", fmt))
    flat = np.asfortranarray(a).reshape(-1, order="F")  # index order: column-major over the shape
    shown = list(flat) if a.size <= 6 or a.ndim > 1 else list(flat[:3]) + list(flat[-3:])
    if a.ndim == 2 and (a.shape[0] > 6 or a.shape[1] > 6):  # rows and columns elided to 3 + 3
        rows = [r for r in range(a.shape[0])]
        rows = rows[:3] + rows[-3:] if len(rows) > 6 else rows
        cols = list(range(a.shape[1]))
        cols = cols[:3] + cols[-3:] if len(cols) > 6 else cols
        shown = [a[r, c] for r in rows for c in cols]
    elif a.ndim > 1:
        shown = [a[idx] for idx in _row_order(a.shape)]
    assert len(shown) == n_vals
    text = _c_printf(fmt, [0] + [float(v) if a.dtype.kind == "f" else int(v) for v in shown])
    whole(from_dlpack(a)).launch(grid=1, block=32)
    interp = capsys.readouterr().out
    # the CUDA was made for GPU memory (gmem), the interpreter ran over numpy memory (generic, as CuTe DSL prints it)
    assert _norm(text).replace(", gmem,", ", generic,") == _norm(interp)


def _row_order(shape):
    """The order print_tensor writes the values of a small tensor: blocks of the modes past 1 (column-major),
    rows of mode 0, then mode 1 across."""
    m, n = shape[0], shape[1]
    rest = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    out = []
    for b in range(rest):
        tail = np.unravel_index(b, shape[2:], order="F") if len(shape) > 2 else ()
        for r in range(m):
            for c in range(n):
                out.append((r, c) + tuple(tail))
    return out
