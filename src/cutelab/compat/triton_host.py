"""``triton``'s host utilities, for CuTe DSL programs on the emulated CUDA device when Triton is not installed.

CuTe DSL programs and libraries time kernels with ``triton.testing.do_bench`` and keep files with
``triton.runtime.cache.FileCacheManager`` (quack's autotuner subclasses it at import). torch's CPU wheels
do not bring Triton, and Triton itself needs a GPU. While the CUDA device is emulated and no ``triton``
is installed, the hook (hook.py, ``IF_ABSENT``) serves these modules:

- ``triton.testing.do_bench``: runs the function (once to warm up, then repeatedly for about ``rep``
  milliseconds, at least once) and gives its time per call in milliseconds (host wall time, which on the
  emulated device is the interpreter's run), as ``return_mode`` or ``quantiles`` ask;
- ``triton.runtime.cache.FileCacheManager``: a directory of files per key (``get_file``, ``put``,
  ``get_group``, ``put_group``) under ``TRITON_CACHE_DIR`` (default ``~/.triton/cache``), written
  atomically.

Anything else of Triton (``triton.jit``, ``triton.language``, ...) is an AttributeError naming it:
cutelab does not compile Triton kernels. An installed Triton is always the one imported.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from typing import Any, Callable, Dict, List, Optional, Sequence

from .namespace import Namespace

__version__ = "0+cutelab"


def do_bench(fn: Callable[[], Any], warmup: float = 25, rep: float = 100, grad_to_none: Any = None,
             quantiles: Optional[Sequence[float]] = None, return_mode: str = "mean") -> Any:
    """triton.testing.do_bench: milliseconds per call of ``fn`` (see the module's docstring)."""
    if return_mode not in ("min", "max", "mean", "median", "all"):
        raise ValueError(f"triton.testing.do_bench: return_mode must be min, max, mean, median or all, "
                         f"got {return_mode!r}")

    def once() -> float:
        if grad_to_none is not None:
            for x in grad_to_none:
                x.grad = None
        t0 = time.perf_counter()
        fn()
        _synchronize()
        return (time.perf_counter() - t0) * 1e3

    once()  # the warm-up (compiles, caches)
    times = [once()]
    budget = max(rep - times[0], 0.0)
    n = min(100, int(budget / max(times[0], 1e-3)))
    times += [once() for _ in range(n)]
    if quantiles is not None:
        import numpy as np

        q = [float(v) for v in np.quantile(np.asarray(times), list(quantiles))]
        return q[0] if len(q) == 1 else q
    if return_mode == "all":
        return times
    return {"min": min, "max": max, "mean": statistics.fmean, "median": statistics.median}[return_mode](times)


def _synchronize() -> None:
    import sys

    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        torch.cuda.synchronize()


def default_cache_dir() -> str:
    return os.path.join(os.path.expanduser("~"), ".triton", "cache")


class FileCacheManager:
    """triton.runtime.cache.FileCacheManager: the files of one key in ``cache_dir``."""

    def __init__(self, key: str, override: bool = False, dump: bool = False):
        self.key = key
        base = os.getenv("TRITON_CACHE_DIR", "").strip() or default_cache_dir()
        self.cache_dir = os.path.join(base, key)
        self.lock_path = os.path.join(self.cache_dir, "lock")
        os.makedirs(self.cache_dir, exist_ok=True)

    def _path(self, filename: str) -> str:
        return os.path.join(self.cache_dir, filename)

    def has_file(self, filename: str) -> bool:
        return os.path.exists(self._path(filename))

    def get_file(self, filename: str) -> Optional[str]:
        """The file's path, or None if the key has no such file."""
        return self._path(filename) if self.has_file(filename) else None

    def put(self, data: Any, filename: str, binary: bool = True) -> str:
        """Write the file (atomically: a temporary file renamed into place) and give its path."""
        os.makedirs(self.cache_dir, exist_ok=True)
        raw = data if isinstance(data, bytes) else str(data).encode()  # text is written as its UTF-8 bytes
        fd, tmp = tempfile.mkstemp(dir=self.cache_dir, prefix=f".{filename}.")
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
        path = self._path(filename)
        os.replace(tmp, path)
        return path

    def get_group(self, filename: str) -> Optional[Dict[str, str]]:
        """The files of a group written by put_group (name -> path), or None if one is missing."""
        path = self.get_file(filename)
        if path is None:
            return None
        with open(path) as f:
            names: List[str] = json.load(f)["child_paths"]
        out = {}
        for n in names:
            p = self.get_file(n)
            if p is None:
                return None
            out[n] = p
        return out

    def put_group(self, filename: str, group: Dict[str, str]) -> str:
        return self.put(json.dumps({"child_paths": sorted(group)}), filename, binary=False)


testing = Namespace("triton.testing", [], lambda: {"do_bench": do_bench},
                    "triton.testing, as cutelab serves it without Triton (do_bench)")
cache = Namespace("triton.runtime.cache", [], lambda: {"FileCacheManager": FileCacheManager,
                                                       "default_cache_dir": default_cache_dir},
                  "triton.runtime.cache, as cutelab serves it without Triton (FileCacheManager)")
runtime = Namespace("triton.runtime", [], lambda: {"cache": cache},
                    "triton.runtime, as cutelab serves it without Triton (its cache)")
triton = Namespace("triton", [], lambda: {"testing": testing, "runtime": runtime},
                   "triton's host utilities, as cutelab serves them without Triton (see cutelab.compat.triton_host)")
triton.__dict__["__version__"] = __version__

__all__ = ["triton", "testing", "runtime", "cache", "do_bench", "FileCacheManager"]
