"""``nvidia-smi`` for the emulated CUDA device: programs (and notebooks) that ask it which GPU they run
on get the emulated part. While the device is emulated and no real nvidia-smi is on PATH,
:func:`put_on_path` puts a small ``nvidia-smi`` program first on PATH (for this process and its
children) that runs :func:`main`.

It answers ``nvidia-smi`` (a summary), ``-L`` and ``--query-gpu=FIELD,... --format=csv[,noheader][,nounits]``
for the fields in :data:`FIELDS`; any other request exits 2 naming what it does answer.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from typing import Callable, Dict, List, Optional, Sequence


def _fields() -> Dict[str, Callable[[int, bool], str]]:
    from ..emulated_gpu import capability, part
    from .device import DeviceProperties

    def mem(i: int, units: bool) -> str:
        mib = part()[3] >> 20
        return f"{mib}" if not units else f"{mib} MiB"

    return {
        "index": lambda i, u: str(i),
        "name": lambda i, u: DeviceProperties().name,
        "compute_cap": lambda i, u: "%d.%d" % capability(),
        "memory.total": mem,
        "count": lambda i, u: str(_count()),
        "uuid": lambda i, u: f"GPU-{DeviceProperties().uuid}",
    }


FIELDS = ("index", "name", "compute_cap", "memory.total", "count", "uuid")


def _count() -> int:
    from .device import count

    return count()


def main(argv: Sequence[str]) -> int:
    """Print what nvidia-smi would for argv; the exit status."""
    argv = list(argv)
    fields = _fields()
    if not argv:
        print(f"cutelab emulated CUDA device (no GPU): {_count()} device(s)")
        for i in range(_count()):
            print(f"GPU {i}: {fields['name'](i, True)}, compute capability {fields['compute_cap'](i, True)}, "
                  f"{fields['memory.total'](i, True)}")
        return 0
    if argv == ["-L"]:
        for i in range(_count()):
            print(f"GPU {i}: {fields['name'](i, True)} (UUID: {fields['uuid'](i, True)})")
        return 0
    query: Optional[List[str]] = None
    fmt: Optional[List[str]] = None
    for a in argv:
        if a.startswith("--query-gpu="):
            query = [f.strip() for f in a.split("=", 1)[1].split(",") if f.strip()]
        elif a.startswith("--format="):
            fmt = [f.strip() for f in a.split("=", 1)[1].split(",")]
        else:
            query = None
            break
    bad = [f for f in (query or []) if f not in fields]
    if query is None or fmt is None or fmt[0] != "csv" or bad or not set(fmt[1:]) <= {"noheader", "nounits"}:
        print(f"nvidia-smi (cutelab's emulated CUDA device): cannot answer {' '.join(argv)!r}"
              + (f" (unknown fields {', '.join(bad)})" if bad else "")
              + "; it answers no arguments, -L, and --query-gpu=FIELD,... --format=csv[,noheader][,nounits] "
              f"for the fields {', '.join(FIELDS)}", file=sys.stderr)
        return 2
    units = "nounits" not in fmt
    if "noheader" not in fmt:
        print(", ".join(f + (" [MiB]" if f == "memory.total" and units else "") for f in query))
    for i in range(_count()):
        print(", ".join(fields[f](i, units) for f in query))
    return 0


_SHIM: List[str] = []


def put_on_path() -> None:
    """Put the emulated nvidia-smi first on PATH (os.environ's, which children inherit), unless a real
    one is there; once per process."""
    if _SHIM or shutil.which("nvidia-smi"):
        return
    import atexit

    d = tempfile.mkdtemp(prefix="cutelab-nvidia-smi-")
    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.path.join(d, "nvidia-smi")
    with open(path, "w") as f:
        f.write(f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {src!r})\n"
                "from cutelab.compat.nvidia_smi import main\nsys.exit(main(sys.argv[1:]))\n")
    os.chmod(path, 0o755)
    os.environ["PATH"] = d + os.pathsep + os.environ.get("PATH", "")
    _SHIM.append(d)
    atexit.register(shutil.rmtree, d, True)
