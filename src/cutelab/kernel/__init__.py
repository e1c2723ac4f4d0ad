"""Kernels: CuTe DSL programs traced to one IR, run as CUDA C++ on a GPU or by numpy on the CPU.

The folders follow the flow:

- ``frontend/``: the AST rewrite of the user's function (``rewrite``), control flow
  (``control``) and the variables runtime regions carry (``carry``, ``carry_obj``), the tracer and
  traced values (``trace``), the memories of traced tensors (``engines``, ``rmem_index``), shared
  memory (``smem``), the host side of ``@cute.jit`` (``host``) and ``cute.printf``
  (``printing``, with its formats in ``cformat``);
- ``ir/``: the IR's nodes (``nodes``, the ``Fault`` op in ``fault``) and symbolic integers (``symbolic``);
- ``analysis/``: value ranges (``ranges``, ``values``), bounds proofs (``prove``, ``bounds``),
  guarded accesses (``guards``) and possible bits (``bits``);
- ``instr/``: one file per instruction family (copies, cp.async, ldmatrix, mma.sync, wgmma,
  TMA loads and stores, SM100 tensor memory and UMMA (tcgen05), mbarriers, math, print_tensor, atomics and memory ordering, bitcast, inline PTX with its
  interpreter ``ptx``); ``gemm`` and ``copy`` dispatch ``cute.gemm``/``cute.copy``;
- ``passes/``: the compiler's decisions, one named pass per file, run in order by
  ``run_passes`` (vector widths, block schedule, lane pairs, retiled copies, cache operators,
  hoisted divisions, shared index sums); their ``Plan`` is what the printer prints and the
  profiler reads;
- ``cuda/``: the CUDA C++ printer (``printer``, which prints the passes' plan; instructions
  print through its public ``lowering.LoweringContext``), NVRTC (``nvrtc``), the driver
  (``driver``) and a fake driver for tests (``fakegpu``);
- ``cpu/``: the numpy interpreter (``interpreter``, its warps ``warps``) and the memory profiler
  (``profiler``);
- ``launch/``: ``@cute.kernel``, ``@cute.jit``, ``cute.compile`` and launches (``api``), their
  arguments (``args``), the launch pipeline (``plan``), compiled functions (``compiled``,
  ``fastpath``, ``fakes``, ``pointers``), CuTe DSL's compile options (``options``), the cluster
  shape of a launch (``cluster``) and cooperative launches (``cooperative``);
- ``arch.py``: ``cute.arch``, the namespace of thread indices, barriers and instructions that
  kernels call by name (it gathers ``frontend``'s and ``instr``'s, and defines a few ops of its
  own: warp shuffles, the warp sync, the dynamic shared-memory size).

Thread-block clusters (``launch(cluster=...)``) touch several folders: ``launch/cluster.py``
checks the shape, ``instr/cluster.py`` holds the cluster ops, ``cuda/cluster.py`` the
cuLaunchKernelEx configuration, and the interpreter runs each cluster's CTAs in one batch.

Each folder's ``__init__`` says what it may import; inside the package, ``ir`` is the ground,
then ``analysis`` and ``passes``, ``frontend``, the back ends ``cuda`` and ``cpu``, ``instr`` (whose
ops print and run through the back ends' contexts), ``arch`` and ``launch`` on top.

May import: ``cutelab``'s core (layouts, tensors, numeric types, the runtime, the emulated GPU
``emulated_gpu``), the atoms (``cutelab.nvgpu``) and, for the memory profiler
(``cpu/profiler``), ``cutelab.analysis`` and ``cutelab.render``. Never what sits above it
(``pipeline*``, ``utils``, ``testing``, ``compat``, the command line): they import it. The core
and the atoms reach the kernel only through the protocol ``cutelab.tracing``, which this
package implements when imported (below).
"""

from .. import tracing as _tracing
from . import arch  # noqa: F401  (cute.arch)
from .cuda.errorword import check_errors  # noqa: F401  (guarded GPU accesses: raise what the error words recorded)
from .launch.compiled import CompiledFunction
from .launch.args import Constexpr
from .launch.api import JitFunction, Kernel, compile, jit, kernel
from .launch.plan import last_launch
from .frontend import engines as _engines  # noqa: F401  (traced tensors' memories; installs make_rmem_tensor's hook)
from .frontend.printing import printf
from .frontend.trace import TraceValue


def _kernel_copy(atom, src, dst, **kwargs):
    from .instr.copy import kernel_copy

    return kernel_copy(atom, src, dst, **kwargs)


def _kernel_gemm(atom, d, a, b, c):
    from .instr.gemm import kernel_gemm

    return kernel_gemm(atom, d, a, b, c)


def _mma_field(atom, name, value, get):
    from .instr import tcgen05_blockscaled, tcgen05_mma, wgmma

    got = tcgen05_blockscaled.mma_field(atom, name, value, get)  # the scale factors' fields (sf_a, sf_b)
    if got is NotImplemented:
        got = tcgen05_mma.mma_field(atom, name, value, get)
    return got if got is not NotImplemented else wgmma.mma_field(atom, name, value, get)


def _print_tensor(t, *a, **kw):
    from .instr.printtensor import print_in_trace

    return print_in_trace(t, *a, **kw)


def _smem_view(ptr, layout):
    from .frontend.smem import swizzled_view

    return swizzled_view(ptr, layout)


def _recast_smem_ptr(ptr, swizzle_, dtype):
    from .frontend.smem import recast_smem_ptr

    return recast_smem_ptr(ptr, swizzle_, dtype)


def _instruction(name):
    from .instr import rmem_view, tcgen05_mma, wgmma

    if name.startswith("tensormap."):
        from .instr import tensormap as tm

        return {"tensormap.copy": tm.copy_tensormap, "tensormap.update": tm.update_tma_descriptor,
                "tensormap.acquire": tm.fence_tma_desc_acquire, "tensormap.release": tm.fence_tma_desc_release,
                "tensormap.cp_release": tm.cp_fence_tma_desc_release, "tensormap.prefetch": tm.prefetch_descriptor}[name]

    return {"tcgen05.commit": tcgen05_mma.commit, "wgmma.fence": wgmma.fence, "wgmma.commit_group": wgmma.commit_group,
            "wgmma.wait_group": wgmma.wait_group, "rmem.recast": rmem_view.recast}[name]


_tracing.install(copy=_kernel_copy, gemm=_kernel_gemm)  # cute.copy / cute.gemm inside a kernel
_tracing.install(mma_field=_mma_field)  # runtime fields of tcgen05 and wgmma atoms inside a kernel (instr/tcgen05_mma.py, wgmma.py)
_tracing.install(instruction=_instruction)  # kernel ops named in the atoms' namespaces (cute.nvgpu.warpgroup.fence, ...)
_tracing.install(print_tensor=_print_tensor)  # print_tensor in a kernel, or deferred in a jit function (instr/printtensor.py)
_tracing.install(smem_view=_smem_view, recast_smem_ptr=_recast_smem_ptr)  # swizzled shared memory (frontend/smem.py)


def _swizzle_index(x, b, m, s):
    from .ir.symbolic import swizzle_expr

    return swizzle_expr(x, b, m, s)


_tracing.install(swizzle_index=_swizzle_index)  # a swizzle of a shared address's bits (cutelab.address.PointerInt.__xor__)


def _runtime_pointer(dtype, value, mem_space, align):
    from .instr.address_access import runtime_pointer

    return runtime_pointer(dtype, value, mem_space, align)


def _runtime_layout(shape, stride):
    from .instr.runtime_layout import runtime_layout

    return runtime_layout(shape, stride)


def _runtime_tensor(ptr, layout):
    from .instr.runtime_layout import runtime_tensor

    return runtime_tensor(ptr, layout)


_tracing.install(runtime_layout=_runtime_layout, runtime_tensor=_runtime_tensor)  # instr/runtime_layout.py
def _address_register(a):
    from .instr.address_access import address_register

    return address_register(a)


_tracing.install(runtime_pointer=_runtime_pointer)  # make_ptr of a runtime Int64 in a kernel (instr/address_access.py)
_tracing.install(address_register=_address_register)  # ptr.toint() kept in a register (instr/address_access.py)


def _param_by_address(param, dtype, align, memspace, op):
    from .instr.address_access import param_by_address

    return param_by_address(param, dtype, align, memspace, op)


_tracing.install(param_by_address=_param_by_address)  # a recast argument read through its address (frontend/engines.py)

__all__ = ["arch", "kernel", "jit", "compile", "printf", "Constexpr", "Kernel", "JitFunction",
           "CompiledFunction", "TraceValue", "last_launch"]


class _KernelDecorator:
    """``cute.kernel``: the decorator, which also stands for this subpackage.

    In the top-level package the name ``kernel`` must be CuTe DSL's decorator, which hides the
    subpackage ``cutelab.kernel``; attribute access falls through to the subpackage, so
    ``cutelab.kernel.frontend.trace`` and ``import cutelab.kernel.cuda.printer as kc`` keep working.
    """

    def __call__(self, fn=None, *, interpret=None):
        return kernel(fn, interpret=interpret)

    def __getattr__(self, name):
        import sys

        return getattr(sys.modules[__name__], name)

    def __repr__(self) -> str:
        return "<cute.kernel decorator (and the cutelab.kernel package)>"


kernel_decorator = _KernelDecorator()
