"""Kernels: CuTe DSL programs traced to a small IR, run as CUDA C++ on a GPU or by numpy on the CPU.

trace.py (symbolic ints in symbolic.py, the IR: a tree of blocks with For/If/While regions,
tracing engines for global, shared and register memory) -> cuda.py (CUDA C++ text)
-> compile.py (NVRTC + disk cache) -> launch.py (kernel/jit/compile, checks, launches through
driver.py); interpret.py runs the same IR with numpy on the CPU, all threads at once under
per-thread masks. rewrite.py rewrites a kernel's for/if/while so that control.py can make
runtime regions of those whose bounds or conditions are runtime values; copy.py is cute.copy
inside a kernel.
"""

from . import compile as _compile_module  # noqa: F401  (imported first: the name `compile` below is cute.compile)
from . import arch, cuda, driver, interpret, symbolic, trace  # noqa: F401
from .guards import check_errors  # noqa: F401  (guarded GPU accesses: raise what the error words recorded)
from .launch import CompiledFunction, Constexpr, JitFunction, Kernel, compile, jit, kernel, last_launch
from .trace import TraceValue, printf

__all__ = ["arch", "kernel", "jit", "compile", "printf", "Constexpr", "Kernel", "JitFunction",
           "CompiledFunction", "TraceValue", "last_launch"]


class _KernelDecorator:
    """``cute.kernel``: the decorator, which also stands for this subpackage.

    In the top-level package the name ``kernel`` must be CuTe DSL's decorator, which hides the
    subpackage ``cutelab.kernel``; attribute access falls through to the subpackage, so
    ``cutelab.kernel.trace`` and ``import cutelab.kernel.cuda as kc`` keep working.
    """

    def __call__(self, fn=None, *, interpret=None):
        return kernel(fn, interpret=interpret)

    def __getattr__(self, name):
        import sys

        return getattr(sys.modules[__name__], name)

    def __repr__(self) -> str:
        return "<cute.kernel decorator (and the cutelab.kernel package)>"


kernel_decorator = _KernelDecorator()
