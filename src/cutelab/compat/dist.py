"""The ``nvidia-cutlass-dsl`` distribution as importlib.metadata sees it under the import hook: programs
that print ``importlib.metadata.version("nvidia-cutlass-dsl")`` learn that cutelab answers for
``cutlass`` (version ``4.8.1+cutelab``: CuTe DSL 4.8.1, the version cutelab follows)."""

from __future__ import annotations

import importlib.metadata
import re
from typing import Any, List, Optional

VERSION = "4.8.1+cutelab"
_NAMES = {"nvidia-cutlass-dsl", "nvidia-cutlass-dsl-libs-base"}


class CutlassDslDistribution(importlib.metadata.Distribution):
    """nvidia-cutlass-dsl, as cutelab's compatibility layer (it has no files)."""

    def __init__(self, name: str):
        self._name = name

    def read_text(self, filename: str) -> Optional[str]:
        if filename in ("METADATA", "PKG-INFO"):
            return (f"Metadata-Version: 2.1\nName: {self._name}\nVersion: {VERSION}\n"
                    "Summary: cutelab's compatibility layer standing in for CuTe DSL\n")
        return None

    def locate_file(self, path: Any) -> Any:
        return None


def find_distributions(context: Any = None) -> List[CutlassDslDistribution]:
    """The stand-in when the question names nvidia-cutlass-dsl (a listing of all distributions
    does not include it)."""
    name = getattr(context, "name", None)
    if not name:
        return []
    norm = re.sub(r"[-_.]+", "-", name).lower()
    return [CutlassDslDistribution(norm)] if norm in _NAMES else []
