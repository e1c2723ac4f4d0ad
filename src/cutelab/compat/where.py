"""Where a call came from in the user's program, and the error for what is not emulated."""

from __future__ import annotations

import os
import sys

_SKIP = (
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,  # cutelab itself
    os.sep + "torch" + os.sep,
    os.sep + "importlib" + os.sep,
    "<frozen ",
)


def user_line(depth: int = 1) -> str:
    """'file:line' of the nearest caller outside cutelab, torch and importlib ('' if none).

    >>> user_line().endswith(":1") or user_line() == ""
    True
    """
    f = sys._getframe(depth)
    while f is not None:
        name = f.f_code.co_filename
        if not any(s in name for s in _SKIP) and not name.startswith("<frozen"):
            return f"{name}:{f.f_lineno}"
        f = f.f_back
    return ""


class _Refused(NotImplementedError):
    """What cutelab refuses, by name, with the caller's line and the reason: "NAME is not STATE
    by cutelab (WHERE): WHY"."""

    state = "provided"

    def __init__(self, name: str, why: str = "", where: str | None = None):
        self.name = name
        where = user_line(2) if where is None else where
        msg = f"{name} is not {self.state} by cutelab"
        if where:
            msg += f" ({where})"
        if why:
            msg += f": {why}"
        super().__init__(msg)


class NotEmulatedError(_Refused):
    """A CUDA call, module or DSL name that cutelab's compatibility layer does not provide.

    >>> str(NotEmulatedError("torch.cuda.mem_get_info", where="prog.py:3"))[:60]
    'torch.cuda.mem_get_info is not emulated by cutelab (prog.py:'
    """

    state = "emulated"


class NotSupportedError(_Refused):
    """A call that cutelab refuses on a real GPU too (NVLink multicast), naming the caller's line.

    >>> str(NotSupportedError("nvshmem.core.get_multicast_tensor", "no multicast", where="prog.py:3"))
    'nvshmem.core.get_multicast_tensor is not supported by cutelab (prog.py:3): no multicast'
    """

    state = "supported"


def refuse(name: str, why: str = ""):
    """A function that raises NotEmulatedError(name) when called, naming the caller's line."""

    def refused(*args, **kwargs):
        raise NotEmulatedError(name, why, where=user_line(2))

    refused.__name__ = name.rsplit(".", 1)[-1]
    refused.__qualname__ = name
    refused.__doc__ = f"Not emulated by cutelab: calling it raises NotEmulatedError naming {name}."
    refused._cutelab_refused = True
    return refused


class NotEmulatedAttributeError(NotEmulatedError, AttributeError):
    """NotEmulatedError for a module attribute: also an AttributeError, so hasattr() is False."""
