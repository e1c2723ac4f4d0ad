"""The TVM-FFI calling style (quack, flash_attn.cute): env streams, torch tensors at the call."""
from compat_helpers import ok, run

PROG = """
import torch
import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack, make_fake_stream, find_runtime_libraries, load_module
import cuda.bindings.driver as cuda

@cute.kernel
def scale_kernel(gX: cute.Tensor, gY: cute.Tensor, s: cutlass.Float32):
    tidx, _, _ = cute.arch.thread_idx()
    gY[tidx] = gX[tidx] * s

@cute.jit
def scale(mX: cute.Tensor, mY: cute.Tensor, s: cutlass.Float32, stream: cuda.CUstream):
    scale_kernel(mX, mY, s).launch(grid=(1, 1, 1), block=(16, 1, 1), stream=stream)
"""


def test_env_stream_is_left_out_at_the_call(tmp_path):
    out = ok(run(tmp_path, PROG + """
x = torch.arange(16, dtype=torch.float32, device="cuda"); y = torch.zeros(16, device="cuda")
stream = make_fake_stream(use_tvm_ffi_env_stream=True)
compiled = cute.compile(scale, from_dlpack(x, enable_tvm_ffi=True), from_dlpack(y, enable_tvm_ffi=True),
                        cutlass.Float32(2.0), stream, options="--enable-tvm-ffi")
compiled(x, y, cutlass.Float32(3.0))                       # no stream: the current one
print(torch.equal(y, 3 * x))
with torch.cuda.stream(torch.cuda.Stream()):
    compiled(x, y, cutlass.Float32(0.5))
print(torch.equal(y, 0.5 * x))
compiled(x, y, cutlass.Float32(1.0), cuda.CUstream(torch.cuda.current_stream().cuda_stream))  # or given
print(torch.equal(y, x), find_runtime_libraries(enable_tvm_ffi=True))
compiled2 = cute.compile[("--enable-tvm-ffi",)](scale, from_dlpack(x), from_dlpack(y), cutlass.Float32(2.0),
                                                make_fake_stream())
compiled2(x, y, cutlass.Float32(4.0), cuda.CUstream(0))
print(torch.equal(y, 4 * x))
try:
    load_module("kernel.o", enable_tvm_ffi=True)
except ValueError as e:
    print(str(e).split(" (")[0], str(e).split("): ")[1].split(":")[0])
"""))
    assert out.splitlines() == ["True", "True", "True []", "True",
                                "cute.runtime.load_module('kernel.o') cannot read the module"]


def test_a_call_without_its_stream_on_the_fake_gpu_reads_the_stream_at_each_launch(tmp_path):
    """The emulation's tensor mode paused (torch.cuda stays emulated) and the fake driver on, as
    benchmarks/quack_host.py --dry-run runs quack's calls: launches go to the GPU path, on the stream
    torch's current stream of the device gives at each call."""
    out = ok(run(tmp_path, PROG + """
from cutelab.compat import torch_cuda
from cutelab.kernel.cuda.fakegpu import fake_cuda_tensor, fake_gpu
from cutelab.kernel.launch import plan
with fake_gpu() as g, torch_cuda.tensor_mode_paused():
    try:
        torch.zeros(2, device="cuda")
    except (RuntimeError, AssertionError) as e:  # a CPU torch: no CUDA without the emulation's mode
        print("paused")
    x, y = fake_cuda_tensor(torch.arange(16, dtype=torch.float32)), fake_cuda_tensor(torch.zeros(16))
    compiled = cute.compile(scale, from_dlpack(x), from_dlpack(y), cutlass.Float32(2.0),
                            make_fake_stream(use_tvm_ffi_env_stream=True), options="--enable-tvm-ffi")
    plan._torch_stream = lambda dev: 0x100 + dev
    compiled(x, y, 3.0)
    plan._torch_stream = lambda dev: 0x200 + dev
    compiled(x, y, 3.0)
    print([hex(r["stream"]) for r in g.launches])
print(torch.zeros(2, device="cuda").is_cuda)  # the mode is back
"""))
    assert out.splitlines() == ["paused", "['0x100', '0x200']", "True"]
