"""The emulated CUDA device of `cutelab run` without a GPU: torch, cuda.bindings.driver, cuda.core."""
import pytest
import torch
from compat_helpers import ok, run

# what only the emulation does (with a real GPU, cutelab run leaves torch and the driver as they are)
emulated_only = pytest.mark.skipif(torch.cuda.is_available(), reason="a real GPU is here: nothing is emulated")

KERNEL = """
import torch
import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack

@cute.kernel
def add_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    i = bidx * 8 + tidx
    gC[i // 8, i % 8] = gA[i // 8, i % 8] + gB[i // 8, i % 8]

@cute.jit
def add(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor):
    add_kernel(mA, mB, mC).launch(grid=(4, 1, 1), block=(8, 1, 1))
"""


@emulated_only
def test_tensors_on_cuda_live_in_host_memory(tmp_path):
    out = ok(run(tmp_path, """
        import torch
        a = torch.randn(4, 8, device="cuda"); b = torch.ones(4, 8).cuda(); c = torch.zeros(4, 8).to("cuda")
        d = torch.empty(3, device=torch.device("cuda", 0)); e = torch.ones(2).to(torch.device("cuda"), torch.float16)
        print(a.is_cuda, b.is_cuda, c.is_cuda, d.is_cuda, e.is_cuda, e.dtype, (a + b).is_cuda)
        cpu = a.cpu()
        print(cpu.is_cuda, a.is_cuda, torch.ones(2).is_cuda, torch.equal(cpu, a), a.to("cpu").is_cuda)
        print(torch.cuda.is_available(), torch.cuda.device_count(), torch.cuda.current_device())
        print(a.device, cpu.device, torch.empty(2, device=a.device).is_cuda, a.get_device())
    """))
    assert out.splitlines() == ["True True True True True torch.float16 True", "False True False True False",
                                "True 1 0", "cuda:0 cpu True 0"]


@emulated_only
def test_new_cuda_memory_is_256_byte_aligned_as_cudamalloc(tmp_path):
    # the CPU allocator aligns to 64 bytes; programs assume the CUDA allocators' 256 (assumed_align=128)
    out = ok(run(tmp_path, """
        import torch
        ts = []
        for n in (1, 7, 33, 1000, 70000, 884736):
            ts += [torch.arange(n, dtype=torch.float16, device="cuda"), torch.ones(n).cuda(),
                   torch.full((n,), 3, dtype=torch.int8).to("cuda"), torch.zeros(n, device="cuda") + 1]
        print(all(t.data_ptr() % 256 == 0 for t in ts), all(t.is_cuda for t in ts))
        a = torch.arange(1000, dtype=torch.float32, device="cuda")
        print(torch.equal(a.cpu(), torch.arange(1000, dtype=torch.float32)), a[1:].data_ptr() - a.data_ptr())
        w = torch.ones(40, device="cuda", requires_grad=True)
        (w * 2).sum().backward()
        print(w.requires_grad, w.is_leaf, float(w.grad.sum()), w.data_ptr() % 256)
    """))
    assert out.splitlines() == ["True True", "True 4", "True True 80.0 0"]


@emulated_only
def test_capability_and_properties_follow_cute_dsl_arch(tmp_path):
    src = """
        import torch
        p = torch.cuda.get_device_properties(0)
        print(torch.cuda.get_device_capability(), p.major, p.minor, p.multi_processor_count,
              p.shared_memory_per_block_optin, torch.cuda.get_device_name().startswith("NVIDIA"))
    """
    assert ok(run(tmp_path, src)).strip() == "(9, 0) 9 0 132 232448 True"
    assert ok(run(tmp_path, src, env={"CUTE_DSL_ARCH": "sm_80"})).strip() == "(8, 0) 8 0 108 166912 True"


def test_streams_events_synchronize_and_a_launch(tmp_path):
    out = ok(run(tmp_path, KERNEL + """
a = torch.randn(4, 8, device="cuda"); b = torch.randn(4, 8, device="cuda"); c = torch.zeros(4, 8, device="cuda")
s = torch.cuda.Stream()
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
with torch.cuda.stream(s):
    assert torch.cuda.current_stream() == s
    start.record()
    add(from_dlpack(a), from_dlpack(b), from_dlpack(c))
    end.record()
torch.cuda.synchronize(); s.synchronize(); end.synchronize()
print(torch.equal(c, a + b), start.elapsed_time(end) > 0, torch.cuda.current_stream() == torch.cuda.default_stream())
"""))
    assert out.strip() == "True True True"


def test_cuda_graph_records_launches_and_replays_them(tmp_path):
    out = ok(run(tmp_path, KERNEL + """
a = torch.randn(4, 8, device="cuda"); b = torch.randn(4, 8, device="cuda"); c = torch.zeros(4, 8, device="cuda")
add(from_dlpack(a), from_dlpack(b), from_dlpack(c))   # warm up (compiles)
c.zero_()
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    add(from_dlpack(a), from_dlpack(b), from_dlpack(c))
    c.mul_(2)
print(float(c.abs().sum()))                  # nothing ran while capturing
g.replay()
print(torch.allclose(c, 2 * (a + b)))
a.fill_(1); b.fill_(2)
g.replay()
print(torch.allclose(c, torch.full_like(c, 6.0)))
"""))
    assert out.splitlines() == ["0.0", "True", "True"]


@emulated_only
def test_unemulated_torch_cuda_call_names_itself_and_the_line(tmp_path):
    p = run(tmp_path, "import torch\n\ntorch.cuda.mem_get_info()\n")
    assert p.returncode != 0
    assert "torch.cuda.mem_get_info is not emulated by cutelab" in p.stderr and "prog.py:3" in p.stderr
    p = run(tmp_path, "import torch\nx = torch.ones(2, device='cuda:1')\n")
    assert p.returncode != 0 and "cuda:1" in p.stderr and "prog.py:2" in p.stderr


@emulated_only
def test_cuda_bindings_driver_and_cuda_core(tmp_path):
    out = ok(run(tmp_path, KERNEL + """
import cuda.bindings.driver as cuda
from cuda.core.experimental import Device
err, = cuda.cuInit(0)
err, dev = cuda.cuDeviceGet(0)
err, sms = cuda.cuDeviceGetAttribute(cuda.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev)
err, stream = cuda.cuStreamCreate(0)
a = torch.ones(4, 8, device="cuda"); c = torch.zeros(4, 8, device="cuda")
compiled = cute.compile(add, from_dlpack(a), from_dlpack(a), from_dlpack(c))
compiled(from_dlpack(a), from_dlpack(a), from_dlpack(c))
print(err == cuda.CUresult.CUDA_SUCCESS, sms, cuda.cuStreamSynchronize(stream)[0] == 0, float(c.sum()))
d = Device(); d.set_current(); s = d.create_stream(); s.sync()
print(d.compute_capability, d.properties.multiprocessor_count)
try:
    cuda.cuMemAlloc(16)
except NotImplementedError as e:
    print(str(e).split(" (")[0])
"""))
    assert out.splitlines() == ["True 132 True 64.0", "ComputeCapability(major=9, minor=0) 132",
                                "cuda.bindings.driver.cuMemAlloc is not emulated by cutelab"]


@emulated_only
def test_autograd_function_backward_sees_the_emulated_device(tmp_path):
    # torch runs an autograd Function's backward without the Python mode stack; the tensors it saved
    # (outputs come back as new Python objects) and the gradients are still on "cuda" there
    out = ok(run(tmp_path, """
        import torch
        class Twice(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x * 2
                ctx.save_for_backward(x, y)
                return y
            @staticmethod
            def backward(ctx, g):
                x, y = ctx.saved_tensors
                z = torch.empty(3, device="cuda")
                print(g.is_cuda, x.is_cuda, y.is_cuda, z.is_cuda, y.device)
                return g * 2
        x = torch.ones(3, device="cuda", requires_grad=True)
        y = Twice.apply(x)
        dx, = torch.autograd.grad(y, x, grad_outputs=torch.ones_like(y))
        print(dx.tolist(), dx.is_cuda)
        c = torch.ones(2); g = c.cuda(); g.add_(1)
        print(c.tolist(), g.is_cuda, c.is_cuda, g.cpu().is_cuda)
    """))
    # .cuda() of a CPU tensor is a copy (as on a GPU): writing it leaves the CPU tensor alone
    assert out.splitlines() == ["True True True True cuda:0", "[2.0, 2.0, 2.0] True",
                                "[1.0, 1.0] True False False"]


@emulated_only
def test_zero_stride_gradient_from_the_engine_is_on_cuda_and_a_kernel_reads_it(tmp_path):
    # out.sum().backward(): torch's engine (C++, no Python mode) makes ones_like(out) and expands it to out's
    # shape, a view with strides (0, 0); it is the gradient of a "cuda" output, so it is on "cuda" in the
    # Function's backward (quack's MLP hands it to a GEMM: test_mlp_zero_stride_grad), and a kernel reads it
    # through from_dlpack with its zero strides. The gradient of a CPU Function stays on the CPU, and a leaf's
    # .grad (accumulated by the engine) is on its leaf's device.
    out = ok(run(tmp_path, KERNEL + """
class Add(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x + 1
    @staticmethod
    def backward(ctx, g):
        c = torch.empty(4, 8, device="cuda")
        add(from_dlpack(g), from_dlpack(g), from_dlpack(c))
        print(g.is_cuda, tuple(g.stride()), c.is_cuda, c.sum().item())
        return c

x = torch.zeros(4, 8, device="cuda", requires_grad=True)
Add.apply(x).sum().backward()
print(x.grad.is_cuda, x.grad.sum().item())
xc = torch.zeros(4, 8, requires_grad=True)
class OnCpu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x + 1
    @staticmethod
    def backward(ctx, g):
        print(g.is_cuda)
        return g
OnCpu.apply(xc).sum().backward()
print(xc.grad.is_cuda)
"""))
    assert out.splitlines() == ["True (0, 0) True 64.0", "True 64.0", "False", "False"]


@emulated_only
def test_cuda_graph_streams_run_concurrently(tmp_path):
    """CUTLASS's all-gather GEMM's pattern: in a graph, a kernel on one stream polls a flag that a kernel
    on another stream sets after a device copy; each stream's steps run in order, a stream's step after
    what it waits for (wait_stream, events), and a poll sees the other stream's flag. The copy
    (cuMemcpyDtoDAsync) also runs at once outside a graph, and refuses memory the program does not hold."""
    out = ok(run(tmp_path, """
import torch
import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack
from cuda.bindings import driver

@cute.kernel
def wait_then_copy(flag: cute.Tensor, src: cute.Tensor, dst: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    seen = cute.arch.load(flag.iterator, cutlass.Int32, sem="acquire", scope="gpu")
    while seen == 0:
        seen = cute.arch.load(flag.iterator, cutlass.Int32, sem="acquire", scope="gpu")
    dst[tidx] = src[tidx] + seen

@cute.kernel
def set_flag(flag: cute.Tensor):
    cute.arch.store(flag.iterator, cutlass.Int32(5), sem="release", scope="gpu")

@cute.jit
def waiter(flag: cute.Tensor, src: cute.Tensor, dst: cute.Tensor, stream):
    wait_then_copy(flag, src, dst).launch(grid=(1, 1, 1), block=(8, 1, 1), stream=stream)

@cute.jit
def setter(flag: cute.Tensor, stream):
    set_flag(flag).launch(grid=(1, 1, 1), block=(1, 1, 1), stream=stream)

flag = torch.zeros(1, dtype=torch.int32, device="cuda")
a = torch.arange(8, dtype=torch.float32, device="cuda"); b = torch.zeros(8, device="cuda")
out = torch.zeros(8, device="cuda"); last = torch.zeros(8, device="cuda")
s1, s2, cap = torch.cuda.Stream(), torch.cuda.Stream(), torch.cuda.Stream()
w = cute.compile(waiter, from_dlpack(flag), from_dlpack(b), from_dlpack(out), s1.cuda_stream)
s = cute.compile(setter, from_dlpack(flag), s2.cuda_stream)
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g, stream=cap):
    s1.wait_stream(cap); s2.wait_stream(cap)
    w(from_dlpack(flag), from_dlpack(b), from_dlpack(out), s1.cuda_stream)      # polls: recorded first
    driver.cuMemcpyDtoDAsync(b.data_ptr(), a.data_ptr(), 32, s2.cuda_stream)  # b = a, then the flag
    s(from_dlpack(flag), s2.cuda_stream)
    e = torch.cuda.Event(); e.record(s1)
    cap.wait_event(e)
    with torch.cuda.stream(cap):
        last.copy_(out)                                                      # after the waiter
print(int(flag[0]), float(out.sum()))   # nothing ran while capturing
g.replay()
print(int(flag[0]), out.tolist() == [i + 5.0 for i in range(8)], torch.equal(last, out))
c = torch.zeros(8, device="cuda")
driver.cuMemcpyDtoDAsync(c.data_ptr(), a.data_ptr(), 32, 0)
print(torch.equal(c, a))
try:
    driver.cuMemcpyDtoDAsync(c.data_ptr(), a.data_ptr(), 64, 0)
except Exception as e:
    print(type(e).__name__, "cuMemcpyDtoDAsync: 64 bytes at" in str(e))
"""))
    assert out.splitlines() == ["0 0.0", "5 True True", "True", "NotEmulatedError True"]


@emulated_only
def test_mm_and_bmm_with_out_dtype(tmp_path):
    """aten::mm.dtype / bmm.dtype (CUDA only in torch; quack's gemm_ref): bf16 operands into a float32 result,
    accumulated in float32 and not rounded to bf16; out= receives it; other types raise as on CUDA."""
    out = ok(run(tmp_path, """
        import torch
        g = torch.Generator().manual_seed(0)
        a = torch.randn(3, 40, 64, generator=g).to(torch.bfloat16).cuda()
        b = torch.randn(3, 64, 24, generator=g).to(torch.bfloat16).cuda()
        ref = a.double() @ b.double()
        c = torch.mm(a[0], b[0], out_dtype=torch.float32, out=None)
        d = torch.bmm(a, b, out_dtype=torch.float32)
        e = torch.empty(40, 24, device="cuda")
        r = torch.mm(a[1], b[1], out_dtype=torch.float32, out=e)
        f = torch.mm(a[2], b[2], out_dtype=torch.bfloat16)
        print(c.dtype, c.is_cuda, d.shape, r is e, f.dtype)
        print((c.double() - ref[0]).abs().max().item() < 1e-4, (d.double() - ref).abs().max().item() < 1e-4,
              torch.equal(e, d[1]), (c != c.to(torch.bfloat16).float()).any().item())
        try:
            torch.mm(a[0].float(), b[0].float(), out_dtype=torch.float16)
        except RuntimeError as x:
            print(str(x).split(";")[0])
    """))
    assert out.splitlines() == [
        "torch.float32 True torch.Size([3, 40, 24]) True torch.bfloat16", "True True True True",
        "torch.mm(out_dtype=torch.float16) (emulated CUDA): out_dtype must be the operands' type or, for "
        "float16/bfloat16 operands, float32"]


@emulated_only
def test_cuda_allocations_are_256_byte_aligned(tmp_path):
    # as cudaMalloc's: the tensors a program makes on "cuda" (and what operations on them allocate) start at
    # multiples of 256 bytes (CPU torch gives 64); views keep their offsets; values, strides and dtypes are kept
    out = ok(run(tmp_path, """
        import torch
        made = []
        for n in range(1, 40):
            a = torch.randn(n, 3, device="cuda", dtype=torch.float16)
            made += [a, a * 2, torch.ones(n).cuda(), torch.arange(n).to("cuda"), a.t().contiguous(),
                     torch.empty(n, 5, device="cuda").to(torch.float8_e4m3fn), *torch.max(a, dim=1)]
        print(sum(t.data_ptr() % 256 != 0 for t in made), all(t.is_cuda for t in made))
        a = torch.arange(12, device="cuda", dtype=torch.float32).reshape(3, 4)
        print(a[1:].data_ptr() - a.data_ptr(), a.stride(), a.sum().item(), (a.t() + 0).stride())
        b = a.clone(); b.add_(1); print(b.data_ptr() % 256, b[0, 0].item())
    """))
    assert out.splitlines() == ["0 True", "16 (4, 1) 66.0 (1, 4)", "0 1.0"]


@emulated_only
def test_profiler_asked_for_cuda_activity_profiles_the_cpu(tmp_path):
    # CUTLASS's MoE grouped GEMM (moe/torch_grouped_mm.py) runs its kernel inside such a profile
    out = ok(run(tmp_path, """
        import torch
        from torch.profiler import profile, ProfilerActivity
        a = torch.ones(4, 8, device="cuda")
        with profile(activities=[ProfilerActivity.CUDA], record_shapes=True) as prof:
            b = (a * 2).sum()
        names = [e.key for e in prof.key_averages()]
        print(float(b), any("aten::mul" in n for n in names))
    """))
    assert out.splitlines() == ["64.0 True"], out
