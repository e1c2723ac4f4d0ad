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


class _NotYetMeta(type):
    """Metaclass of :func:`not_yet` stand-ins: any public attribute of the class raises when called."""

    def __getattr__(cls, attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)

        def refused(*args, **kwargs):
            _raise_not_yet(f"{cls._dsl_name}.{attr}")

        return refused


def _raise_not_yet(name: str) -> None:
    from .kernel.frontend.trace import user_location

    raise TraceError(f"{name} (CuTe DSL 4.8.1) is not in cutelab yet (used at {user_location() or 'an unknown line'})")


def not_yet(dsl_name: str) -> type:
    """A stand-in class for a CuTe DSL 4.8.1 name cutelab does not provide yet: it imports (libraries
    name such classes in module-level tuples, annotations and subclass lists), and constructing it,
    calling one of its members or calling it as a function raises TraceError naming it and the
    user's line.

    >>> Op = not_yet("cute.nvgpu.tcgen05.LdRed32x32bOp")
    >>> isinstance(Op, type), Op.__name__
    (True, 'LdRed32x32bOp')
    >>> Op()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    cutelab.errors.TraceError: cute.nvgpu.tcgen05.LdRed32x32bOp (CuTe DSL 4.8.1) is not in cutelab yet (used at ...)
    """

    def __init__(self, *args, **kwargs):
        _raise_not_yet(dsl_name)

    name = dsl_name.rsplit(".", 1)[-1]
    return _NotYetMeta(name, (), {"__init__": __init__, "_dsl_name": dsl_name,
                                  "__doc__": f"{dsl_name}: not in cutelab yet (using it raises TraceError)"})
