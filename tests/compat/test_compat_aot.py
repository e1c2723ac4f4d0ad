"""Ahead-of-time export and loading (kernel/launch/aot.py), and the JitArgument protocol with MLIR types
(kernel/frontend/c_abi.py), run by CUTLASS's own tutorials, unchanged.

The files in tests/compat/programs/tutorials/{export,tvm_ffi,ffi} are CUTLASS's, byte for byte (their
git blob ids at CUTLASS commit 7107b05535f8977f5ecb9d01ee203205b1fd9bc4 are checked below). The TVM-FFI
tutorials import ``tvm_ffi`` and ffi/jit_argument.py builds a nanobind extension with CMake: both come
from ``scripts/quack_tests.py --fetch .quack`` (apache-tvm-ffi and nanobind in .quack/site; README's test
command runs it); without them those tests skip.
"""
import hashlib
import os
import re
import shutil
import subprocess
import sys

import pytest

from compat_helpers import SRC, ok, run

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TUTORIALS = os.path.join(HERE, "programs", "tutorials")
QUACK = os.environ.get("CUTELAB_QUACK_DIR", os.path.join(ROOT, ".quack"))
SITE = os.path.join(QUACK, "site")

BLOBS = {
    "export/export_to_c.py": "6276a707e83a4020a7a7291f953fbe47a4eda103",
    "export/load_in_python.py": "758fe228d770f8d6db08de63696da521e4bbba38",
    "export/run_with_static_linking.cpp": "2faee5aa6c5c4967399528a321c0fc73850f17b1",
    "tvm_ffi/aot_export.py": "04de3b8f2b17e1116259fbd49096fe185f349dc8",
    "tvm_ffi/aot_use_in_torch.py": "62ed14b78bbee83f6242963b30a0ab9520109185",
    "ffi/jit_argument.py": "58368551c4cab356b4c292545c589ba24c05fec0",
    "ffi/CMakeLists.txt": "fc5ad954a2239ed9da88cd6bad8edf284393ba22",
    "ffi/tensor.cpp": "19f70b5189770defb4ca5683fee3da947c8f12ba",
}

needs_cc = pytest.mark.skipif(not (shutil.which("gcc") or shutil.which("cc")), reason="no C compiler")


def test_carried_files_are_cutlass_s():
    for path, blob in BLOBS.items():
        with open(os.path.join(TUTORIALS, path), "rb") as f:
            data = f.read()
        assert hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() == blob, path


def _env(extra=()):
    e = dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, *extra]), PYTHONHASHSEED="0")
    e.pop("CUTE_DSL_ARCH", None)
    return e


def _cutelab_run(folder, name, *args, extra=(), env=None, timeout=300):
    e = _env(extra)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "cutelab", "run", name, *args], cwd=str(folder), env=e,
                          capture_output=True, text=True, timeout=timeout)


def _folder(tmp_path, sub):
    d = tmp_path / sub
    shutil.copytree(os.path.join(TUTORIALS, sub), d)
    return d


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """export/ after CUTLASS's export_to_c.py ran in it (once per worker): build/ holds its headers, objects
    and shared library."""
    if not (shutil.which("gcc") or shutil.which("cc")):
        pytest.skip("no C compiler")
    d = _folder(tmp_path_factory.mktemp("aot"), "export")
    ok(_cutelab_run(d, "export_to_c.py"))
    return d


def test_export_to_c_then_load_in_python(exported):
    """export/export_to_c.py writes each function's header and object and links both objects into a shared
    library with gcc; load_in_python.py loads the objects and the library and runs their kernels on the CPU
    interpreter. Its tensors are (10,16):(1,10) where the functions were compiled for (?{div=16},?):(?,1)
    (CuTe DSL's exported function does not check): each call warns, naming the failed condition, and runs
    the function for the tensors as given, so its own asserts (a[0,0] == b[0,0] + 1) hold."""
    d = exported
    build = d / "build"
    assert sorted(os.listdir(build)) == ["add_one_example.h", "add_one_example.o", "libexport_example.so",
                                         "print_tensor_example.h", "print_tensor_example.o"]
    h = (build / "add_one_example.h").read_text()
    for name in ("} add_one_Kernel_Module_t;", "static inline void add_one_Kernel_Module_Load(",
                 "static inline void add_one_Kernel_Module_Unload(", "} add_one_Tensor_a_t;", "} add_one_Tensor_b_t;",
                 "static inline int32_t cute_dsl_add_one_wrapper(add_one_Kernel_Module_t *module, "
                 "add_one_Tensor_a_t *a, add_one_Tensor_b_t *b, cudaStream_t stream)"):
        assert name in h, name
    # the dynamic extents (32-bit) and the one dynamic stride (64-bit) of (?{div=16},?):(?{i64},1), as CuTe DSL's
    assert re.search(r"void \*data;\n    int32_t dynamic_shapes\[2\];\n    int64_t dynamic_strides\[1\];\n"
                     r"\} add_one_Tensor_a_t;", h), h
    assert "print_tensor_Tensor_a_t" in (build / "print_tensor_example.h").read_text()
    p = _cutelab_run(d, "load_in_python.py")
    out = ok(p)
    # print_tensor ran twice (from its object, then from the library), the second time after add_one's a[0] = b[0] + 1
    rows = re.findall(r"a: raw_ptr\(0x[0-9a-f]+: f32, gmem, align<4>\) o \(10,16\):\(1,10\) = \n  \( ([0-9.]+), ", out)
    assert [float(x) for x in rows] == [0.0, 2.0], out[:2000]
    warned = re.findall(r"RuntimeWarning: cute.runtime.load_module\('(\./build/[a-z_]+\.(?:o|so))'\): (\w+): "
                        r"argument 0 \(compiled for FakeTensor<Float32, \(\?\{div=16\}, \?\), \(\?\{i64 div=1\}, 1\)>\): "
                        r"shape\[0\] = 10 is not a multiple of 16", p.stderr)
    assert warned == [("./build/print_tensor_example.o", "print_tensor"), ("./build/add_one_example.o", "add_one"),
                      ("./build/libexport_example.so", "print_tensor"), ("./build/libexport_example.so", "add_one")], \
        p.stderr


_C_CALLER = r"""
#include <stdio.h>
#include <stdint.h>
void _mlir_add_one_cuda_init(void **);
void _mlir_add_one__mlir_ciface_cutlass_add_one(void **args, int32_t num_args);
int main(void) {
    void *lib = 0; int32_t err = 0;
    void *init_args[2] = {&lib, &err};
    _mlir_add_one_cuda_init(init_args);
    int32_t ret = 0; float a = 0, b = 0; void *stream = 0;
    void *args[4] = {&a, &b, &stream, &ret};
    _mlir_add_one__mlir_ciface_cutlass_add_one(args, 4);
    printf("%d %d\n", err, ret);
    return 0;
}
"""


def test_c_entry_points_fail_with_a_message(exported, tmp_path):
    """Called from C without Python (the header's module load and wrapper), cutelab's exported functions
    cannot run the kernel: each prints why on stderr and returns cudaErrorNotSupported (801)."""
    (tmp_path / "caller.c").write_text(_C_CALLER)
    cc = shutil.which("gcc") or shutil.which("cc")
    subprocess.run([cc, "-o", "caller", "caller.c", str(exported / "build" / "add_one_example.o")], cwd=tmp_path,
                   check=True)
    p = subprocess.run(["./caller"], cwd=tmp_path, capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout.split() == ["801", "801"], (p.stdout, p.stderr)
    assert p.stderr.count("add_one: this object was exported by cutelab, whose kernels run through Python: load it "
                          "with cute.runtime.load_module") == 2, p.stderr


CUDA_INCLUDE = next((d for d in (os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "include"),
                                 "/usr/local/cuda/include", "/usr/include")
                     if os.path.exists(os.path.join(d, "cuda_runtime.h"))), None)


@pytest.mark.skipif(CUDA_INCLUDE is None or not shutil.which("g++"), reason="no cuda_runtime.h or g++")
def test_the_cpp_example_compiles_against_the_headers(exported):
    """export/run_with_static_linking.cpp (CUTLASS's) compiles against cutelab's headers: the names it uses
    (module type, load/unload, tensor structs and their fields, the wrapper) are there with its types."""
    d = exported
    p = subprocess.run(["g++", "-fsyntax-only", f"-I{CUDA_INCLUDE}", "-Ibuild", "run_with_static_linking.cpp"],
                       cwd=d, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


needs_tvm_ffi = pytest.mark.skipif(not os.path.isdir(os.path.join(SITE, "tvm_ffi")),
                                   reason="apache-tvm-ffi not in .quack/site (scripts/quack_tests.py --fetch .quack)")


@needs_cc
@needs_tvm_ffi
def test_tvm_ffi_aot_export_then_use_in_torch(tmp_path):
    """tvm_ffi/aot_export.py exports add_one (compiled with --enable-tvm-ffi) as __tvm_ffi_add_one and links
    it into build/add_one.so; aot_use_in_torch.py loads it and calls it with torch tensors: b = a + 1."""
    d = _folder(tmp_path, "tvm_ffi")
    out = ok(_cutelab_run(d, "aot_export.py", extra=[SITE]))
    assert "Successfully created shared library: ./build/add_one.so" in out
    with open(d / "build" / "add_one.o", "rb") as f:
        assert b"__tvm_ffi_add_one\0" in f.read()
    out = ok(_cutelab_run(d, "aot_use_in_torch.py", extra=[SITE]))
    assert out.splitlines()[-2:] == ["result of b after aot_mod.add_one(a, b)",
                                     "tensor([ 1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10.], device='cuda:0')"], out


PROG = """
import sys, torch, cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack, load_module
import cuda.bindings.driver as cuda

@cute.kernel
def scale_kernel(x: cute.Tensor, y: cute.Tensor, s: cutlass.Float32):
    i, _, _ = cute.arch.thread_idx()
    if i < x.shape[0]:
        y[i] = x[i] * s

@cute.jit
def scale(x: cute.Tensor, y: cute.Tensor, s: cutlass.Float32, n: cutlass.Constexpr, stream: cuda.CUstream):
    scale_kernel(x, y, s).launch(grid=(1, 1, 1), block=(n, 1, 1), stream=stream)

if __name__ == "__main__":
    x = torch.arange(16, dtype=torch.float32, device="cuda"); y = torch.zeros(16, device="cuda")
    cf = cute.compile(scale, from_dlpack(x, assumed_align=16).mark_layout_dynamic(), from_dlpack(y, assumed_align=16).mark_layout_dynamic(),
                      cutlass.Float32(2.0), 32, cuda.CUstream(0))
    cf.export_to_c(file_path=".", file_name="scale_mod", function_prefix="scl")
    print(open("scale_mod.h").read().count("} scl_Tensor_"), "float s" in open("scale_mod.h").read())
    m = load_module("scale_mod.o")
    m.scl(from_dlpack(x, assumed_align=16), from_dlpack(y, assumed_align=16), 3.0, stream=cuda.CUstream(0))
    print(torch.equal(y, 3 * x))
    x2 = torch.arange(40, dtype=torch.float32, device="cuda")[::2]; y2 = torch.zeros(20, device="cuda")
    m.scl(from_dlpack(x2), from_dlpack(y2), 1.0, cuda.CUstream(0))   # strided: the compiled stride is 1
    print(torch.equal(y2, x2))
    try:
        m.scl(from_dlpack(x), from_dlpack(y), 3.0, stream2=None)
    except TypeError as e:
        print(e)
    try:
        load_module("scale_mod.o", enable_tvm_ffi=True).scl
    except ValueError as e:
        print(str(e).split(": ", 1)[1])
"""


@needs_cc
def test_an_export_rebuilds_its_function_and_checks_its_arguments(tmp_path):
    """A function with a runtime scalar and a Constexpr, exported and loaded in the same program: the header has
    the two tensor structs and the scalar; the loaded function runs (b = a * s); a strided tensor where the
    compile saw a unit stride warns and still runs correctly; a wrong keyword and a TVM-FFI load of a C export
    are errors naming themselves."""
    p = run(tmp_path, PROG)
    out = ok(p)
    assert out.splitlines() == [
        "2 True", "True", "True",
        "scl: the exported function has no argument 'stream2' (its arguments: x, y, s, stream)",
        "the function was exported without --enable-tvm-ffi; load the module without enable_tvm_ffi"], out
    assert len(re.findall(r"RuntimeWarning: .*stride\[0\] is 2, the fake's is 1", p.stderr)) == 1, p.stderr


def test_what_an_export_cannot_record_is_refused_by_name(tmp_path):
    """A function defined inside another one (not found again by its module and name), a method of a kernel
    object, and an argument of a kind the record cannot hold: each a CompileError naming the export."""
    out = ok(run(tmp_path, """
        import numpy as np, cutlass
        import cutlass.cute as cute
        from cutlass.cute.runtime import from_dlpack

        def make():
            @cute.jit
            def inner(t: cute.Tensor):
                cute.print_tensor(t)
            return inner

        class K:
            @cute.jit
            def __call__(self, t: cute.Tensor):
                cute.print_tensor(t)

        @cute.jit
        def with_object(t: cute.Tensor, extra: cutlass.Constexpr):
            cute.print_tensor(t)

        t = from_dlpack(np.zeros(4, np.float32))
        for fn, args in ((make(), (t,)), (K(), (t,)), (with_object, (t, object()))):
            try:
                cute.compile(fn, *args).export_to_c(".", "m")
            except Exception as e:
                print(type(e).__name__, str(e)[:110])
    """))
    lines = out.splitlines()
    assert len(lines) == 3, out
    assert lines[0].startswith("CompileError inner.export_to_c: make.<locals>.inner is not defined at the top of "
                               "its module"), lines[0]
    assert lines[1].startswith("CompileError __call__.export_to_c: the compiled function is a method bound to K object"), \
        lines[1]
    assert lines[2].startswith("CompileError with_object.export_to_c: argument 1 (extra) is of type object; an export "
                               "records"), lines[2]


_CUTE_DSL_LIKE = r"""
#include <stdint.h>
const char add_one_args_spec[] = "spec";
void _mlir_add_one_cuda_init(void **args) { (void)args; }
int __tvm_ffi_add_one(void *s, const void *a, int32_t n, void *r) { return 0; }
"""


@needs_cc
def test_load_module_refuses_a_module_cute_dsl_exported(tmp_path):
    """An object with the names CuTe DSL's exports have (its MLIR host code's _mlir_*_cuda_init, the metadata
    *_args_spec, a __tvm_ffi_* entry) and no cutelab record: refused, naming what was found and why; a file
    that is neither: refused as having no cutelab export."""
    (tmp_path / "dsl.c").write_text(_CUTE_DSL_LIKE)
    cc = shutil.which("gcc") or shutil.which("cc")
    subprocess.run([cc, "-c", "-fPIC", "-o", "dsl.o", "dsl.c"], cwd=tmp_path, check=True)
    out = ok(run(tmp_path, """
        import cutlass.cute as cute
        for path, tvm in (("dsl.o", False), ("dsl.o", True), ("prog.py", False)):
            try:
                cute.runtime.load_module(path, enable_tvm_ffi=tvm)
            except ValueError as e:
                print(str(e))
    """))
    lines = out.splitlines()
    assert len(lines) == 3, out
    for line in lines[:2]:
        assert re.match(r"cute\.runtime\.load_module\('dsl\.o'\) \(.*prog\.py:\d+\): this module was exported by "
                        r"CuTe DSL, not by cutelab \(it has _mlir_add_one_cuda_init, add_one_args_spec, "
                        r"__tvm_ffi_add_one: host code of CuTe DSL's MLIR pipeline", line), line
    assert "no cutelab export found in the file" in lines[2], lines[2]


JIT_ARGUMENT = """
import ctypes
import cutlass
import cutlass.cute as cute
import numpy as np
from cutlass._mlir import ir
from cutlass._mlir.dialects import llvm

class CTensor(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_void_p), ("shape", ctypes.c_int32 * 2), ("stride", ctypes.c_int32 * 2)]

class TensorValue(ir.Value):
    def __init__(self, v):
        super().__init__(v)

    @property
    def ptr(self):
        return cute.make_ptr(cutlass.Float32, llvm.extractvalue(llvm.PointerType.get(), self, [0]))

    def _pair(self, k):
        i32 = ir.IntegerType.get_signless(32)
        s = llvm.extractvalue(llvm.StructType.get_literal([i32] * 2), self, [k])
        return tuple(llvm.extractvalue(i32, s, [i]) for i in range(2))

class Arg:
    def __init__(self, c):
        self.c = c

    def __get_mlir_types__(self):
        i32 = ir.IntegerType.get_signless(32)
        pair = llvm.StructType.get_literal([i32] * 2)
        return [llvm.StructType.get_literal([llvm.PointerType.get(), pair, pair])]

    def __new_from_mlir_values__(self, values):
        return TensorValue(values[0])

    def __c_pointers__(self):
        return [ctypes.addressof(self.c)]

@cute.jit
def show(t):
    shape, stride = t._pair(1), t._pair(2)
    cute.printf("shape: {} stride: {}", shape, stride)
    cute.print_tensor(cute.make_tensor(t.ptr, cute.make_layout(shape, stride=stride)))

x = np.arange(6, dtype=np.float32)
c = CTensor(x.ctypes.data, (2, 3), (3, 1))
arg = Arg(c)
f = cute.compile(show, arg)
f(arg)
c.shape[0], c.shape[1], c.stride[0], c.stride[1] = 3, 2, 1, 3  # the same memory, read as its transpose
f(arg)
"""


def test_jit_argument_with_a_c_struct_of_mlir_types(tmp_path):
    """ffi/jit_argument.py's protocol without its nanobind module: a user type names an llvm struct {ptr,
    {i32, i32}, {i32, i32}} with MLIR's types, points at a C struct of that layout, and the jit function reads
    its fields with llvm.extractvalue; a call after the struct changed sees the new values."""
    out = ok(run(tmp_path, JIT_ARGUMENT))
    assert "shape: (2,3) stride: (3,1)" in out and "shape: (3,2) stride: (1,3)" in out, out
    values = [re.findall(r"-?\d+\.\d+", block) for block in out.split("data=")[1:]]
    assert [[float(v) for v in vals] for vals in values] == [[0, 1, 2, 3, 4, 5], [0, 3, 1, 4, 2, 5]], out


NANOBIND = os.path.join(SITE, "nanobind", "cmake")


@pytest.mark.skipif(not os.path.isdir(NANOBIND) or not shutil.which("cmake") or not shutil.which("g++"),
                    reason="nanobind (scripts/quack_tests.py --fetch .quack), cmake or g++ missing")
def test_jit_argument_tutorial_runs_unchanged(tmp_path):
    """ffi/jit_argument.py builds its nanobind module with CMake (nanobind found through CMAKE_PREFIX_PATH),
    makes a C struct of a (2,8,4):(32,4,1) torch tensor and prints it through the JitArgument protocol."""
    d = _folder(tmp_path, "ffi")
    out = ok(_cutelab_run(d, "jit_argument.py", extra=[SITE], env={"CMAKE_PREFIX_PATH": NANOBIND}, timeout=900))
    assert "shape: (2,8,4)" in out and "stride: (32,4,1)" in out, out[-3000:]
    # element (i, j, k) of the tensor is 32 i + 4 j + k; print_tensor shows mode 2 across the rows' blocks
    assert re.search(r"\[\[\[ 0\.000000,  4\.000000,  8\.000000, \.\.\.,  20\.000000,  24\.000000,  28\.000000, \],\n"
                     r"\s+\[ 32\.000000,  36\.000000,", out), out[-3000:]


@needs_cc
def test_a_tvm_ffi_export_with_an_env_stream_is_called_without_it(tmp_path):
    """The TVM-FFI form with an env stream in the middle of the arguments (make_fake_stream(
    use_tvm_ffi_env_stream=True)), loaded with enable_tvm_ffi=True and called with torch tensors and no
    stream: compiled path for tensors like the compile's, the warned path for a strided one; both right."""
    out = ok(run(tmp_path, """
        import torch, cutlass
        import cutlass.cute as cute
        from cutlass.cute.runtime import from_dlpack, make_fake_stream, load_module
        import cuda.bindings.driver as cuda

        @cute.kernel
        def k(x: cute.Tensor, y: cute.Tensor):
            i, _, _ = cute.arch.thread_idx()
            y[i] = x[i] + 1.0

        @cute.jit
        def add1(x: cute.Tensor, stream: cuda.CUstream, y: cute.Tensor):
            k(x, y).launch(grid=(1, 1, 1), block=(8, 1, 1), stream=stream)

        x = torch.arange(8, dtype=torch.float32, device="cuda"); y = torch.zeros(8, device="cuda")
        cf = cute.compile(add1, from_dlpack(x), make_fake_stream(use_tvm_ffi_env_stream=True), from_dlpack(y),
                          options="--enable-tvm-ffi")
        cf.export_to_c("add1.o", function_name="add1")
        f = load_module("add1.o", enable_tvm_ffi=True)["add1"]
        f(x, y)
        print(torch.equal(y, x + 1))
        x2 = torch.arange(16, dtype=torch.float32, device="cuda")[::2]
        f(x2, y)
        print(torch.equal(y, x2 + 1))
    """))
    assert out.splitlines() == ["True", "True"], out
