"""Errors raised by cutelab.

Every user mistake raises one of these, with a message that names the operation, its
operands and the condition that failed.
"""


class LayoutError(ValueError):
    """An operation of the layout algebra got input outside its domain."""


class ParseError(LayoutError):
    """A layout or tuple string could not be read."""


class TensorError(LayoutError):
    """A tensor operation got mismatched shapes or out-of-range coordinates."""


class TraceError(RuntimeError):
    """A kernel could not be traced into cutelab's kernel IR."""


class CompileError(RuntimeError):
    """Generated CUDA C++ failed to compile."""


class LaunchError(ValueError):
    """A kernel launch was asked for with bad arguments (shapes, alignment, grid)."""
