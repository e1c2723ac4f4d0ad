"""Record every kernel cutelab prints and every interpreter result, for a refactoring's proof.

With ``CUTELAB_RECORD=DIR`` set and this folder on ``PYTHONPATH``, every Python process (pytest,
its subprocesses, examples, benchmarks) appends one JSON line per kernel launch to
``DIR/<pid>.jsonl``:

- ``cuda``: the sha1 of the CUDA C++ that the printer makes for the launch's IR (rendered even
  on the CPU, so every traced kernel is covered), or of the error it raised;
- ``out``: the sha1 of every buffer after the CPU interpreter ran (absent on the GPU path);
- ``test``: the pytest node that ran it (``PYTEST_CURRENT_TEST``) or the command line; ``seq``:
  the launch's number within it.

The CUDA texts themselves go to ``DIR/cuda/<sha1>.cu``. ``scripts/record/compare.py A B``
compares two recordings. The hook finds the printer and the interpreter by the names listed in
``_PLACES`` (importing them, since ``cutelab.kernel`` no longer imports both itself): a move of
those modules adds its new names there. Record from a snapshot of the tree (``git archive``), not
from a tree being edited: subprocesses (examples, programs) import the source as it is when they start.
"""

import os

if os.environ.get("CUTELAB_RECORD"):
    import hashlib
    import importlib
    import importlib.abc
    import importlib.util
    import json
    import sys
    import threading

    _DIR = os.environ["CUTELAB_RECORD"]
    os.makedirs(os.path.join(_DIR, "cuda"), exist_ok=True)
    _lock = threading.Lock()
    _local = threading.local()
    _seq = {}
    # (module holding the CUDA printer's render(ir), module holding interpret(ir, buffers, ...))
    _PLACES = [("cutelab.kernel.cuda", "cutelab.kernel.interpret"),
               ("cutelab.kernel.cuda.printer", "cutelab.kernel.cpu.interpreter")]

    def _sha(b: bytes) -> str:
        return hashlib.sha1(b).hexdigest()

    def _buf_bytes(a) -> bytes:
        import numpy as np

        a = np.asarray(a)
        if a.dtype == object:
            return repr(a.tolist()).encode()
        return np.ascontiguousarray(a).view(np.uint8).tobytes() + str(a.dtype).encode()

    def _who() -> str:
        t = os.environ.get("PYTEST_CURRENT_TEST")
        return t.rsplit(" (", 1)[0] if t else " ".join(sys.argv)

    def _write(entry: dict) -> None:
        with _lock:
            with open(os.path.join(_DIR, f"{os.getpid()}.jsonl"), "a") as f:
                f.write(json.dumps(entry) + "\n")

    def _cuda_of(render, ir) -> str:
        cache = ir.__dict__.setdefault("_rec_cuda", {})
        if "sha" not in cache:
            _local.quiet = True
            try:
                text = render(ir)
            except Exception as e:  # noqa: BLE001 - what the printer refused is recorded too
                text = f"// render raised {type(e).__name__}: {e}"
            finally:
                _local.quiet = False
            sha = _sha(text.encode())
            path = os.path.join(_DIR, "cuda", sha + ".cu")
            if not os.path.exists(path):
                with open(path, "w") as f:
                    f.write(text)
            cache["sha"] = sha
        return cache["sha"]

    def _patch(cuda_mod, interp_mod) -> None:
        real = interp_mod.interpret
        render = cuda_mod.render

        def interpret(ir, buffers, *a, **k):
            who = _who()
            n = _seq[who] = _seq.get(who, 0) + 1
            entry = {"test": who, "seq": n, "kernel": ir.name, "cuda": _cuda_of(render, ir)}
            try:
                real(ir, buffers, *a, **k)
            except BaseException as e:
                entry["raised"] = f"{type(e).__name__}: {e}"
                _write(entry)
                raise
            entry["out"] = _sha(b"".join(_buf_bytes(buffers[i]) for i in sorted(buffers)))
            _write(entry)

        interp_mod.interpret = interpret
        cls = cuda_mod.CudaRenderer
        real_render = cls.render

        def render_method(self):
            text = real_render(self)
            if getattr(_local, "quiet", False):
                return text
            sha = _sha(text.encode())
            path = os.path.join(_DIR, "cuda", sha + ".cu")
            if not os.path.exists(path):
                with open(path, "w") as f:
                    f.write(text)
            who = _who()
            n = _seq[who] = _seq.get(who, 0) + 1
            _write({"test": who, "seq": n, "kernel": self.ir.name, "gpu_cuda": sha})
            return text

        cls.render = render_method

    class _After(importlib.abc.MetaPathFinder):
        """Patches once cutelab.kernel has been imported whole."""

        def find_spec(self, name, path, target=None):
            if name != "cutelab.kernel":
                return None
            sys.meta_path.remove(self)
            try:
                spec = importlib.util.find_spec(name)
            finally:
                sys.meta_path.insert(0, self)
            if spec is None or spec.loader is None:
                return None
            loader = spec.loader
            real_exec = loader.exec_module

            def exec_module(module):
                real_exec(module)
                sys.meta_path[:] = [f for f in sys.meta_path if f is not self]
                import importlib
                for c, i in _PLACES:
                    try:
                        importlib.import_module(c)
                        importlib.import_module(i)
                    except ImportError:
                        continue
                    if c in sys.modules and i in sys.modules and hasattr(sys.modules[c], "CudaRenderer"):
                        _patch(sys.modules[c], sys.modules[i])
                        return
                raise RuntimeError(f"record: none of {_PLACES} imported with cutelab.kernel")

            loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, _After())
