"""A stand-in for an MLIR name cutelab does not provide: it imports, and raises when used."""

from __future__ import annotations

from typing import Any

from ..where import NotEmulatedError, user_line


class Refused:
    """``cutlass._mlir...name``: calling it (or anything reached from it) raises NotEmulatedError."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise NotEmulatedError(self._name, "cutelab has no MLIR; this operation has no counterpart in its kernel IR yet",
                               where=user_line(2))

    def __getattr__(self, attr: str) -> "Refused":
        if attr.startswith("_"):
            raise AttributeError(attr)
        return Refused(f"{self._name}.{attr}")

    def __repr__(self) -> str:
        return f"<{self._name} (not in cutelab)>"


def module_getattr(module_name: str):
    """A module __getattr__ answering every public name with a Refused stand-in."""

    def __getattr__(name: str) -> Any:
        if name.startswith("_") or name.startswith("pytest"):  # probes by tools (pytest_plugins, __wrapped__)
            raise AttributeError(name)
        return Refused(f"{module_name}.{name}")

    return __getattr__
