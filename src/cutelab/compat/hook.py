"""The import hook: ``cutlass``, ``cutlass.cute`` and every ``cutlass.*`` module resolve to cutelab.

A meta-path finder placed first in ``sys.meta_path`` (so it wins over an installed
nvidia-cutlass-dsl) answers for ``cutlass`` and its submodules, and, while the CUDA device is
emulated, for ``cuda.bindings.driver`` and ``cuda.core`` (and, where Triton is not installed, for
triton's host utilities: ``IF_ABSENT``, triton_host.py). Only :func:`install` puts it there
(``cutelab run`` and ``cutelab.compat.install()`` call it); a plain ``import cutlass`` without it
means whatever is installed.

Resolution of ``cutlass.X.Y``: the table ``ALIASES`` first (the DSL-internal façades in this
package), then cutelab's module of the same path (``cutlass.cute.nvgpu.warp`` ->
``cutelab.nvgpu.warp``, ``cutlass.utils`` -> ``cutelab.utils``). A name with neither is a
ModuleNotFoundError naming it and the importing line.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import os
import sys
from typing import Any, Dict, Optional

from .where import user_line

#: cutlass.* (and cuda.*) module -> the module that stands for it
ALIASES: Dict[str, str] = {
    "cutlass": "cutelab.compat.namespaces:cutlass",
    "cutlass.cute": "cutelab.compat.namespaces:cute",
    "cutlass.cute.arch": "cutelab.compat.namespaces:arch",
    "cutlass.cute.arch.smem": "cutelab.compat.namespaces:arch",  # map_dsmem_ptr, store_async_dsmem, ...
    "cutlass.cute.arch.nvvm_wrappers": "cutelab.compat.namespaces:arch",  # FULL_MASK, WARP_SIZE, the wrappers
    "cutlass.cute.math": "cutelab.compat.namespaces:math",
    "cutlass.cute.runtime": "cutelab.compat.namespaces:runtime",
    "cutlass.cute.testing": "cutelab.compat.namespaces:testing",
    "cutlass.testing": "cutelab.compat.namespaces:testing",
    "cutlass.torch": "cutelab.compat.namespaces:torch",
    "cutlass.utils": "cutelab.compat.namespaces:utils",
    "cutlass.utils.hardware_info": "cutelab.compat.dsl_utils",  # HardwareInfo
    "cutlass.cute.typing": "cutelab.compat.cute_typing",
    "cutlass.cute.tensor": "cutelab.compat.cute_core",
    "cutlass.cute.core": "cutelab.compat.cute_core",
    "cutlass.cute.atom": "cutelab.compat.cute_core",
    "cutlass.cutlass_dsl": "cutelab.compat.cutlass_dsl",
    "cutlass.cutlass_dsl.cutlass": "cutelab.compat.cutlass_dsl",
    "cutlass.base_dsl": "cutelab.compat.base_dsl",
    "cutlass.base_dsl.typing": "cutelab.compat.base_dsl",
    "cutlass.base_dsl.arch": "cutelab.compat.base_dsl",
    "cutlass.base_dsl.dsl": "cutelab.compat.base_dsl",
    "cutlass.base_dsl.ast_preprocessor": "cutelab.compat.base_dsl",
    "cutlass.base_dsl.ast_helpers": "cutelab.compat.base_dsl",
    "cutlass.base_dsl.jit_executor": "cutelab.compat.base_dsl",
    "cutlass.base_dsl.runtime": "cutelab.compat.base_dsl",
    "cutlass.base_dsl.runtime.cuda": "cutelab.compat.base_dsl:cuda",
    "cutlass.base_dsl.common": "cutelab.compat.base_dsl",
    "cutlass.base_dsl.utils": "cutelab.compat.base_dsl",
    "cutlass.base_dsl.compiler": "cutelab.compat.base_dsl",
    "cutlass.base_dsl.tvm_ffi_builder": "cutelab.compat.base_dsl",
    "cutlass.base_dsl.tvm_ffi_builder.spec": "cutelab.compat.tvm_ffi_spec",
    "cutlass.cute._tvm_ffi_args_spec_converter": "cutelab.compat.tvm_ffi_spec",
    "cutlass.base_dsl._mlir_helpers": "cutelab.compat.base_dsl",
    "cutlass.base_dsl.env_manager": "cutelab.compat.base_dsl",
    "cutlass._mlir": "cutelab.compat.mlir",
    "cutlass._mlir_helpers": "cutelab.compat.mlir_helpers",
    "cutlass._mlir_helpers.math": "cutelab.compat.mlir_helpers.math",
    "cutlass._mlir_helpers.arith": "cutelab.compat.mlir_helpers.arith",
    "cutlass._mlir_helpers.vector": "cutelab.compat.mlir_helpers.vector",
    "cutlass._mlir_helpers.dialect_proxy": "cutelab.compat.mlir_helpers.dialect_proxy",
    # the bindings' native module, which programs import MLIR's type names from (IntegerType)
    "cutlass._mlir._mlir_libs": "cutelab.compat.mlir",
    "cutlass._mlir._mlir_libs._cutlass_ir": "cutelab.compat.mlir",
    "cutlass._mlir._mlir_libs._cutlass_ir._mlir": "cutelab.compat.mlir",
    "cutlass._mlir._mlir_libs._cutlass_ir._mlir.ir": "cutelab.compat.mlir.ir",
    "cutlass.experimental": "cutelab.compat.experimental:experimental",
    "cutlass.experimental.primitives": "cutelab.compat.experimental:primitives",
    "cutlass.experimental.cuda": "cutelab.compat.experimental:cuda",
    "cutlass.cute.experimental": "cutelab.compat.experimental:cute_experimental",
    "cutlass.cute.experimental.iket": "cutelab.compat.experimental:iket",
    "cutlass.jax": "cutelab.compat.jax_bridge",  # cutlass_call: CuTe DSL launchers in JAX computations
    "cutlass.jax.testing": "cutelab.compat.jax_bridge.testing",
}

#: modules answered only while the CUDA device is emulated (no GPU)
EMULATED: Dict[str, str] = {
    "cuda": "cutelab.compat.cuda_driver:cuda_pkg",
    "cuda.bindings": "cutelab.compat.cuda_driver:bindings_pkg",
    "cuda.bindings.driver": "cutelab.compat.cuda_driver",
    "cuda.bindings.runtime": "cutelab.compat.cuda_driver:runtime",
    "cuda.cuda": "cutelab.compat.cuda_driver",
    "cuda.core": "cutelab.compat.cuda_core",
    "cuda.core.experimental": "cutelab.compat.cuda_core",
    "cuda.pathfinder": "cutelab.compat.distributed.nvshmem:pathfinder",
    "nvshmem": "cutelab.compat.distributed.nvshmem:nvshmem_pkg",
    "nvshmem.core": "cutelab.compat.distributed.nvshmem",
}


#: modules served only while the CUDA device is emulated and no installed package provides them
#: (an installed Triton is always the one imported): module -> the module that stands for it
IF_ABSENT: Dict[str, str] = {
    "triton": "cutelab.compat.triton_host:triton",
    "triton.testing": "cutelab.compat.triton_host:testing",
    "triton.runtime": "cutelab.compat.triton_host:runtime",
    "triton.runtime.cache": "cutelab.compat.triton_host:cache",
    "jax_tvm_ffi": "cutelab.compat.jax_bridge.tvm_ffi",  # TVM-FFI functions as XLA targets (on the CPU)
}


_PROBING = [False]


def _imported_by_torch() -> bool:
    """The import statement being served is in torch's own code (importlib's and this module's frames
    skipped): torch probes for Triton to use its compiler, which the stand-in is not."""
    f = sys._getframe(1)
    while f is not None:
        name = f.f_code.co_filename
        if not (name.startswith("<frozen importlib") or name == __file__):
            return f"{os.sep}torch{os.sep}" in name
        f = f.f_back
    return False


def _absent(fullname: str, path: Any) -> bool:
    """No installed package provides fullname (for a submodule: its top-level package is ours), and
    the importer is not torch."""
    if _PROBING[0] or _imported_by_torch():
        return False
    top = fullname.partition(".")[0]
    if top != fullname:
        return sys.modules.get(top) is _load(IF_ABSENT[top])
    if importlib.machinery.PathFinder.find_spec(fullname, path) is not None:
        return False
    if top == "triton":
        # torch itself must see no Triton, as on its CPU build: its cached probe answers now, before the
        # façade exists (torch would take it for the compiler: triton.language, ...)
        _PROBING[0] = True
        try:
            importlib.import_module("torch.utils._triton").has_triton_package()
        except ImportError:
            pass
        finally:
            _PROBING[0] = False
    return True


#: real modules imported on a GPU (not emulated), patched after they run: module -> the patch
PATCHED_ON_GPU: Dict[str, str] = {
    "nvshmem.core": "cutelab.compat.distributed.nvshmem:refuse_multicast_on_gpu",
}


class _PatchingLoader(importlib.abc.Loader):
    """The real module's loader, then a patch applied to the module it made."""

    def __init__(self, loader: Any, patch: str):
        self.loader, self.patch = loader, patch

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module) -> None:
        self.loader.exec_module(module)
        _load(self.patch)(module)


def _load(target: str):
    mod_name, _, attr = target.partition(":")
    mod = importlib.import_module(mod_name)
    return getattr(mod, attr) if attr else mod


def _generic_target(fullname: str) -> Optional[str]:
    """cutlass.cute.X.Y -> cutelab.X.Y; cutlass.X.Y -> cutelab.X.Y."""
    if fullname.startswith("cutlass._mlir."):
        return "cutelab.compat.mlir." + fullname[len("cutlass._mlir."):]
    for prefix in ("cutlass.cute.", "cutlass."):
        if fullname.startswith(prefix):
            return "cutelab." + fullname[len(prefix):]
    return None


class _AliasLoader(importlib.abc.Loader):
    """Hands out an existing module object under the cutlass.* name (nothing is executed)."""

    def __init__(self, fullname: str, module):
        self.fullname, self.module = fullname, module
        self.saved = {k: module.__dict__[k] for k in ("__spec__", "__loader__") if k in module.__dict__}

    def create_module(self, spec):
        return self.module

    def exec_module(self, module) -> None:
        # importlib stamped the alias's spec on the module: give cutelab's module its own back
        for k in ("__spec__", "__loader__"):
            if k in self.saved:
                module.__dict__[k] = self.saved[k]


class CutlassFinder(importlib.abc.MetaPathFinder):
    """Finds cutlass.* (and, emulating, cuda.*) in cutelab."""

    def __init__(self, emulate_cuda: bool):
        self.emulate_cuda = emulate_cuda

    def _target(self, fullname: str):
        if fullname in ALIASES:
            return ALIASES[fullname]
        if self.emulate_cuda and fullname in EMULATED:
            return EMULATED[fullname]
        if fullname == "cutlass" or fullname.startswith("cutlass."):
            return _generic_target(fullname)
        if self.emulate_cuda and (fullname.startswith("cuda.bindings.") or fullname.startswith("cuda.core.")):
            return "!"  # a CUDA module that is not emulated
        if self.emulate_cuda and fullname in IF_ABSENT and _absent(fullname, None):
            return IF_ABSENT[fullname]
        return None

    def find_spec(self, fullname, path=None, target=None):
        if not self.emulate_cuda and fullname in PATCHED_ON_GPU:
            spec = importlib.machinery.PathFinder.find_spec(fullname, path)
            if spec is not None and spec.loader is not None:
                spec.loader = _PatchingLoader(spec.loader, PATCHED_ON_GPU[fullname])
            return spec
        t = self._target(fullname)
        if t is None:
            return None
        where = user_line(2)
        if t == "!":
            from .where import NotEmulatedError

            raise NotEmulatedError(f"the module {fullname}", "cutelab emulates cuda.bindings.driver, "
                                   "cuda.bindings.runtime and cuda.core without a GPU", where=where)
        try:
            module = _load(t)
        except ModuleNotFoundError as e:
            wanted = t.partition(":")[0]
            if e.name and (e.name == wanted or wanted.startswith(e.name + ".")):
                raise ModuleNotFoundError(
                    f"No module named {fullname!r}: cutelab's compatibility layer has no {fullname} "
                    f"(looked for {wanted})" + (f"; imported at {where}" if where else ""), name=fullname) from None
            raise
        spec = importlib.machinery.ModuleSpec(fullname, _AliasLoader(fullname, module),
                                              is_package=hasattr(module, "__path__"))
        return spec

    def find_distributions(self, context: Any = None) -> list:
        """importlib.metadata's question: nvidia-cutlass-dsl is cutelab's stand-in (dist.py)."""
        from .dist import find_distributions

        return find_distributions(context)


_FINDER: Optional[CutlassFinder] = None


def install_hook(emulate_cuda: bool) -> CutlassFinder:
    """Put the finder first in sys.meta_path and drop any cutlass (or emulated cuda) modules
    already imported, so that the next import finds cutelab's."""
    global _FINDER
    if _FINDER is not None and _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    _FINDER = CutlassFinder(emulate_cuda)
    sys.meta_path.insert(0, _FINDER)
    for name in list(sys.modules):
        if name == "cutlass" or name.startswith("cutlass.") or (emulate_cuda and (
                name in EMULATED or name.startswith(("cuda.bindings.", "cuda.core.")))):
            del sys.modules[name]
    return _FINDER


def uninstall_hook() -> None:
    """Take the finder out, and forget the cutlass.* (and cuda.*) modules it handed out."""
    global _FINDER
    if _FINDER is None:
        return
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    emulate = _FINDER.emulate_cuda
    _FINDER = None
    for name in list(sys.modules):
        if name == "cutlass" or name.startswith("cutlass.") or (emulate and (
                name in EMULATED or name.startswith(("cuda.bindings.", "cuda.core.")))):
            del sys.modules[name]


def installed() -> bool:
    """True while the hook is in sys.meta_path."""
    return _FINDER is not None and _FINDER in sys.meta_path
