"""CuTe DSL's TVM-FFI calling style, as cutelab runs it.

quack and flash_attn.cute compile with ``options="--enable-tvm-ffi"`` and a stream made by
``make_fake_stream(use_tvm_ffi_env_stream=True)``; the compiled function is then called without
that stream argument and launches on the caller's current stream (torch's). Here:

- ``make_fake_stream(use_tvm_ffi_env_stream=True)`` is an :class:`EnvStream`;
- ``cute.compile`` remembers where EnvStreams were given; a call that leaves them out gets
  ``ENV_STREAM`` there, and each launch takes it as torch's current stream on the launch's device
  (on the CPU interpreter, ``torch.cuda.current_stream()``: the emulation's), or the default stream 0
  without CUDA;
- ``from_dlpack(..., enable_tvm_ffi=...)`` is from_dlpack (cutelab's tensors need no FFI);
- ``cute.runtime.find_runtime_libraries()`` is empty: cutelab's compiled code needs no runtime
  library to link; ``load_module`` loads what cutelab's ``export_to_c`` wrote (kernel/launch/aot.py) and
  refuses a module CuTe DSL exported.
"""

from __future__ import annotations

from typing import Any, Dict, List

from ..kernel.cuda.driver import CUstream
from ..runtime import ENV_STREAM, EnvStream  # noqa: F401  (EnvStream: cute.runtime's, kept here by name)
from .where import NotEmulatedError, user_line


def make_fake_stream(use_tvm_ffi_env_stream: bool = False) -> CUstream:
    """cute.runtime.make_fake_stream: a stream argument for ahead-of-time compiles."""
    return EnvStream(0) if use_tvm_ffi_env_stream else CUstream(0)


def current_stream() -> CUstream:
    """The caller's current stream: torch's current CUDA stream, else the default stream."""
    from ..kernel.launch.plan import env_stream_now

    return env_stream_now()


def from_dlpack(tensor: Any, assumed_align: Any = None, use_32bit_stride: bool = False,
                enable_tvm_ffi: bool = False, force_tf32: bool = False) -> Any:
    """cute.runtime.from_dlpack with CuTe DSL 4.8.1's keywords (enable_tvm_ffi changes nothing here)."""
    from ..runtime import from_dlpack as _from_dlpack

    if use_32bit_stride:
        raise NotEmulatedError("from_dlpack(..., use_32bit_stride=True)", "cutelab's tensors use 64-bit strides",
                               where=user_line(2))
    return _from_dlpack(tensor, assumed_align=assumed_align)


class TvmFfiFunction:
    """A compiled function whose EnvStream arguments may be left out: there it gets ENV_STREAM, which
    each launch takes as torch's current stream on its device (kernel.launch.plan._env_stream).

    A call first tries the generated call that ran the compiled function's last call (``_hot`` of a
    CompiledFunction or FakeCompiled: it checks every argument and launches, or does nothing), then
    the compiled function's own call."""

    def __init__(self, cf: Any, env_positions: List[int], nargs: int):
        self.cf, self.env_positions, self.nargs = cf, env_positions, nargs
        self.__name__ = getattr(cf, "name", "compiled")
        self._short = nargs - len(env_positions)  # the number of arguments a call that leaves them out gives
        # the env streams all last (quack's, flash_attn.cute's): one tuple to append
        self._tail = (ENV_STREAM,) * len(env_positions) if env_positions == list(range(self._short, nargs)) else None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.env_positions and len(args) == self._short:
            if self._tail is not None:
                args = args + self._tail
            else:
                full = list(args)
                for p in self.env_positions:
                    full.insert(p, ENV_STREAM)
                args = tuple(full)
            if not kwargs:
                hot = getattr(self.cf, "_hot", None)
                if hot is not None and hot(args, None):
                    return None
        return self.cf(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.cf, name)

    def __repr__(self) -> str:
        return f"<compiled {self.__name__} (TVM-FFI calling style)>"


class _Compile:
    """cute.compile, also as cute.compile[options](...)."""

    def __call__(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        from ..kernel.launch.args import _constexpr_positions
        from ..kernel.launch.api import compile as _compile
        from ..kernel.launch.api import jit_target

        cf = _compile(fn, *args, **kwargs)
        target = jit_target(fn)
        const = _constexpr_positions(target, len(args))
        kept = [i for i in range(len(args)) if i not in const]
        env = [j for j, i in enumerate(kept) if isinstance(args[i], EnvStream)]
        if not env:
            return cf
        return TvmFfiFunction(cf, env, len(kept))

    def __getitem__(self, options: Any) -> "_Compile":
        return self

    def __repr__(self) -> str:
        return "<cute.compile>"


compile = _Compile()  # noqa: A001


def find_runtime_libraries(enable_tvm_ffi: bool = True) -> List[str]:
    """The shared libraries a program must link to run code exported by the DSL: none for cutelab."""
    return []


def load_module(file_path: str, *, enable_tvm_ffi: bool = False) -> Any:
    """cute.runtime.load_module of a module cutelab exported (kernel/launch/aot.py): its functions compiled
    again from the exporting program's source; a module CuTe DSL exported is refused, naming why."""
    from ..kernel.launch.aot import load_module as _load

    return _load(str(file_path), enable_tvm_ffi=enable_tvm_ffi, compile_fn=compile, where=user_line(2))


RUNTIME_EXTRAS: Dict[str, Any] = {
    "make_fake_stream": make_fake_stream, "from_dlpack": from_dlpack, "find_runtime_libraries": find_runtime_libraries,
    "load_module": load_module,
}
