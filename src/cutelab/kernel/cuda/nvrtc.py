"""Compile CUDA C++ with NVRTC (through cuda-python's cuda.bindings) to a cubin, cached on disk.

The cache key is sha256 of the source, the target architecture, the NVRTC version and the
options, so a cached cubin is reused only for exactly the same kernel on the same kind of GPU.
The cache lives in ``$CUTELAB_CACHE_DIR`` or ``~/.cache/cutelab/kernels``; writes are atomic.
NVRTC needs no GPU, so kernels compile (and their SASS can be inspected) on any machine.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from ...errors import CompileError

__all__ = ["nvrtc_version", "compile_cuda", "cache_dir", "CompileResult", "nvrtc_options"]

OPTIONS = ("--std=c++17", "-default-device")


def nvrtc_options() -> Tuple[str, ...]:
    """NVRTC's options: a multiply followed by an add may contract to one fma (rounding once), as CuTe
    DSL's kernels do (its PTX's mul.f32/add.f32 are contractible) and as nvcc does by default;
    ``CUTELAB_FMAD=0`` keeps every a*b+c rounding twice, as the IR says and the CPU interpreter
    computes, for results bit-identical to the interpreter's."""
    return OPTIONS + (("--fmad=false",) if os.environ.get("CUTELAB_FMAD", "1") == "0" else ("--fmad=true",))
VERBOSE_PTXAS = "--ptxas-options=-v"  # ptxas reports registers and spills in the log (spill_report)


_INVALID_OPTION = 5  # NVRTC_ERROR_INVALID_OPTION
_NVRTC: Any = None  # the NVRTC module, imported once (fakegpu.fake_gpu puts its fake here)


def _nvrtc() -> Any:
    global _NVRTC
    if _NVRTC is not None:
        return _NVRTC
    try:
        from cuda.bindings import nvrtc  # cuda-python >= 12.6
    except ImportError:
        try:
            from cuda import nvrtc  # type: ignore[no-redef]  # older cuda-python
        except ImportError as e:
            raise CompileError(
                "compiling a kernel for the GPU needs cuda-python and NVRTC: "
                "pip install 'cutelab[gpu]' (cuda-python, nvidia-cuda-nvrtc)"
            ) from e
    _NVRTC = nvrtc
    return nvrtc


def _check(res: Any, what: str, prog: Any = None) -> Any:
    err = res[0]
    if int(err) != 0:
        log = ""
        if prog is not None:
            log = _log(prog)
        raise CompileError(f"NVRTC {what} failed: {err!r}" + (f"\n{log}" if log else ""))
    return res[1] if len(res) == 2 else res[1:]


def _log(prog: Any) -> str:
    nvrtc = _nvrtc()
    err, n = nvrtc.nvrtcGetProgramLogSize(prog)
    if int(err) != 0 or n <= 1:
        return ""
    buf = b" " * n
    nvrtc.nvrtcGetProgramLog(prog, buf)
    return buf.decode(errors="replace").rstrip("\x00").strip()


_VERSION: Optional[Tuple[int, int]] = None


def nvrtc_version() -> Tuple[int, int]:
    global _VERSION
    if _VERSION is None:
        major, minor = _check(_nvrtc().nvrtcVersion(), "version")
        _VERSION = (int(major), int(minor))
    return _VERSION


def cache_dir() -> Path:
    d = os.environ.get("CUTELAB_CACHE_DIR")
    return Path(d) if d else Path.home() / ".cache" / "cutelab" / "kernels"


class CompileResult:
    """A compiled kernel image: the cubin bytes, where it came from and how long it took; ``log``
    NVRTC's messages (ptxas's registers and spills among them, kept with the cached image)."""

    def __init__(self, cubin: bytes, key: str, cached: bool, seconds: float, log: str = ""):
        self.cubin = cubin
        self.key = key
        self.cached = cached
        self.seconds = seconds
        self.log = log


_MEMORY: Dict[str, bytes] = {}
_MEMORY_LOG: Dict[str, str] = {}
_SPILL = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")
_REGS = re.compile(r"Used (\d+) registers")


def spill_report(log: str) -> Optional[Tuple[int, int, int]]:
    """(spill store bytes, spill load bytes, registers) from ptxas's verbose log, or None without one.

    >>> spill_report("ptxas info    : Used 255 registers, used 1 barriers, 1032 bytes stack frame, 1032 bytes "
    ...              "spill stores, 1456 bytes spill loads")
    (1032, 1456, 255)
    """
    m = _SPILL.search(log or "")
    if m is None:
        return None
    r = _REGS.search(log)
    return int(m.group(1)), int(m.group(2)), int(r.group(1)) if r else 0


def _key(source: str, arch: str, options: Tuple[str, ...]) -> str:
    major, minor = nvrtc_version()
    h = hashlib.sha256()
    for part in (source, arch, f"nvrtc {major}.{minor}", " ".join(options)):
        h.update(part.encode())
        h.update(b"\x00")
    return h.hexdigest()


def compile_cuda(source: str, name: str, arch: str = "sm_90", options: Optional[Tuple[str, ...]] = None,
                 use_cache: bool = True) -> CompileResult:
    """Compile source to a cubin for arch (e.g. "sm_90"), through the in-memory and disk caches, with
    ``options`` (default: ``nvrtc_options()``, read at each call).

    Raises CompileError with NVRTC's log when the source does not compile.
    """
    t0 = time.perf_counter()
    if options is None:
        options = nvrtc_options()
    key = _key(source, arch, options)
    if use_cache:
        if key in _MEMORY:
            return CompileResult(_MEMORY[key], key, True, time.perf_counter() - t0, _MEMORY_LOG.get(key, ""))
        path = cache_dir() / f"{key}.cubin"
        try:
            data = path.read_bytes()
        except OSError:
            data = None
        if data:
            try:
                log = (cache_dir() / f"{key}.log").read_text()
            except OSError:
                log = ""
            _MEMORY[key], _MEMORY_LOG[key] = data, log
            return CompileResult(data, key, True, time.perf_counter() - t0, log)
    nvrtc = _nvrtc()
    prog = _check(nvrtc.nvrtcCreateProgram(source.encode(), f"{name}.cu".encode(), 0, [], []), "create")
    try:
        opts: List[bytes] = [f"--gpu-architecture={arch}".encode()] + [o.encode() for o in options]
        res = nvrtc.nvrtcCompileProgram(prog, len(opts) + 1, opts + [VERBOSE_PTXAS.encode()])
        if int(res[0]) == _INVALID_OPTION:  # an NVRTC without --ptxas-options: compile without the report
            nvrtc.nvrtcDestroyProgram(prog)
            prog = _check(nvrtc.nvrtcCreateProgram(source.encode(), f"{name}.cu".encode(), 0, [], []), "create")
            res = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        log = _log(prog)
        if int(res[0]) != 0:
            numbered = "\n".join(f"{i + 1:4d}  {line}" for i, line in enumerate(source.splitlines()))
            raise CompileError(f"NVRTC could not compile kernel {name} for {arch}:\n{log}\n--- source ---\n{numbered}")
        size = _check(nvrtc.nvrtcGetCUBINSize(prog), "cubin size", prog)
        buf = b" " * size
        _check((nvrtc.nvrtcGetCUBIN(prog, buf)[0], None), "get cubin", prog)
        cubin = bytes(buf)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    if use_cache:
        _MEMORY[key], _MEMORY_LOG[key] = cubin, log
        _write_atomic(cache_dir() / f"{key}.cubin", cubin)
        _write_atomic(cache_dir() / f"{key}.cu", source.encode())
        _write_atomic(cache_dir() / f"{key}.log", log.encode())
    return CompileResult(cubin, key, False, time.perf_counter() - t0, log)


def _write_atomic(path: Path, data: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache is not an error: the kernel still runs


def clear_memory_cache() -> None:
    """Forget in-process compiled images (the disk cache stays)."""
    _MEMORY.clear()
    _MEMORY_LOG.clear()
