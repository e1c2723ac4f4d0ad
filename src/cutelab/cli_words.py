"""The words the figure commands of the command line share (``cutelab.commands`` and
``cutelab.cli_sm100``): element types as options name them (``--ab f16``, ``--elem e4m3``)."""

from __future__ import annotations

from typing import Any

__all__ = ["TYPES", "dtype"]

TYPES = {"f16": "Float16", "bf16": "BFloat16", "tf32": "TFloat32", "f32": "Float32", "f64": "Float64",
         "e4m3": "Float8E4M3FN", "e5m2": "Float8E5M2", "s8": "Int8", "u8": "Uint8", "s32": "Int32"}


def dtype(name: str) -> Any:
    """The cutelab numeric type an option names (``"f16"`` is Float16)."""
    from . import numeric

    return getattr(numeric, TYPES[name])
