"""The public emit API of the CUDA printer: what an instruction may use to print itself.

An op with its own back ends (``ir.nodes.Op``) implements ``cuda(self, ctx)``; ``ctx`` is a
``LoweringContext`` and the op prints only through it, never through the printer's internals::

    def cuda(self, ctx):
        ctx.declare(self.dst)                         # the register array, once per kernel scope
        a = ctx.expr(self.base)[0]                    # an integer expression as C
        t = ctx.fresh("ldsm")                         # a fresh C name: "ldsm17"
        with ctx.braces():                            # "{", the lines inside indented, "}"
            ctx.emit(f"unsigned int {t}[4];")
            ctx.emit(f"{ctx.reg(self.dst)}[0] = {t}[0];")

Lines go where the printer is (inside the current statement, at the current indentation);
``prologue`` puts a line at the top of the kernel body instead. Names the context hands out
(``fresh``, ``base``) are unique within the kernel.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator, List, Optional, Tuple

from .dtypes import ctype as _ctype
from .dtypes import to_storage as _to_storage


class LoweringContext:
    """The printer as an instruction sees it (see the module docstring). ``ir`` is the kernel."""

    __slots__ = ("_r",)

    def __init__(self, renderer: Any):
        self._r = renderer

    @property
    def ir(self) -> Any:
        """The KernelIR being printed (read only)."""
        return self._r.ir

    # ---- lines
    def emit(self, line: str) -> None:
        """Print one line of C at the current indentation."""
        self._r.emit(line)

    @contextmanager
    def indented(self) -> Iterator[None]:
        """The lines emitted inside are indented one level more."""
        self._r.indent += 1
        try:
            yield
        finally:
            self._r.indent -= 1

    @contextmanager
    def braces(self, open_line: str = "{", close_line: str = "}") -> Iterator[None]:
        """Emit open_line, the lines inside indented one level more, then close_line."""
        self.emit(open_line)
        with self.indented():
            yield
        self.emit(close_line)

    def prologue(self, line: str) -> None:
        """Print line at the top of the kernel body (after the shared and register declarations),
        where every thread runs it once: for values an op hoists out of the code (wgmma.py)."""
        self._r.prologue(line)

    def fresh(self, prefix: str) -> str:
        """A C name not used elsewhere in the kernel: prefix followed by a new number."""
        self._r.n_tmp += 1
        return f"{prefix}{self._r.n_tmp}"

    def memo(self, key: str) -> dict:
        """A dict that lives as long as this kernel's printing, for an instruction family's own
        bookkeeping (e.g. which values it put in the prologue)."""
        return self._r.memos.setdefault(key, {})

    def following(self) -> list:
        """The statements after the op being printed, in its block, in order (empty where the op is
        printed outside a block's statement list): for an op that prepares what the next ones use
        (wgmma.fence packs the register A operands of the wgmmas it fences)."""
        nxt = self._r.following
        return [] if nxt is None else nxt[0][nxt[1]:]

    # ---- names and values
    def reg(self, r: Any) -> str:
        """The C name of register array r (in the logical block being printed)."""
        return self._r.rn(r)

    def declare(self, r: Any) -> None:
        """Declare register array r (once: later calls do nothing)."""
        self._r.reg_decl(r)

    def value(self, ref: Any, dtype: Any) -> str:
        """A Ref (register element, index expression, scalar argument or constant) as a C value of
        dtype's compute type (float for f16/bf16)."""
        return self._r.ref_compute(ref, dtype)

    def stored(self, ref: Any, dtype: Any) -> str:
        """A Ref as a C value of dtype's storage type (the 16-bit word of an f16/bf16)."""
        return self._r.ref_storage(ref, dtype)

    def cond(self, c: Any) -> str:
        """A condition (register element, comparison expression or constant) as a C boolean."""
        return self._r.cond(c)

    def expr(self, e: Any, extra: Tuple[int, int] = (0, 0)) -> Tuple[str, str]:
        """(C code, C type) of an integer expression; extra widens the range the type must hold."""
        return self._r.iexpr(e, extra)

    def index_exprs(self, op: Any) -> Tuple[Any, ...]:
        """op's ``index_exprs()`` (TMA box coordinates) as the ``ranges`` pass simplified them with the
        value ranges of the registers they read where op runs (passes/ranges.py), or as they are."""
        got = self._r.plan.ranged.get(id(op))
        return got if got is not None else tuple(op.index_exprs())

    def base(self, base: Any, offsets: Tuple[int, ...], param: Any = None, op: Any = None) -> str:
        """Declare the base offset of an access of offsets as a local and return its name (or a
        literal); the local already includes ``base_shift(name)`` of every offset."""
        return self._r.base_var(base, offsets, param, op)

    def shared_address(self, sh: Any, offset: Any = 0) -> str:
        """The 32-bit shared-window address (C, unsigned int) of element ``offset`` of shared array
        sh (an int or C code, in the elements of sh's C array: bytes for sub-byte types): the
        operand of shared-memory PTX (``ldmatrix``, ``cp.async``, ``mbarrier``, TMA). The array's
        window address is taken once per kernel; the offset adds in 32 bits."""
        return self._r.shared_address(sh, str(offset))

    def base_shift(self, name: str) -> int:
        """The offset a local of ``base`` already includes (0 for none)."""
        return self._r.base_shift.get(name, 0)

    # ---- bounds guards (analysis/guards.py)
    def guard_code(self, op: Any) -> Optional[int]:
        """The error code of op where the launch could not prove its accesses in bounds, else None."""
        return self._r.guards.get(id(op))

    def guard_accesses(self, op: Any) -> List[Any]:
        """The accesses of op that the launch could not prove in bounds."""
        return list(self._r.guard_accesses.get(id(op), ()))

    def guard_cond(self, op: Any, accesses: Any = None) -> str:
        """The C condition that the unproved accesses of op (or those of ``accesses``) are in bounds;
        declares the temporaries it needs first."""
        return self._r.guard_cond(op, accesses)

    @contextmanager
    def guarded(self, op: Any, braces: bool = True) -> Iterator[None]:
        """The lines emitted inside run only where op's unproved accesses are in bounds; elsewhere
        ``cl_fail`` records op's error code (analysis/guards.py). An op the launch proved: the lines
        inside braces (``braces=False``: as they are)."""
        code = self.guard_code(op)
        if code is None:
            if braces:
                with self.braces():
                    yield
            else:
                yield
            return
        self.emit(f"if (!({self.guard_cond(op)})) cl_fail({code}u); else")
        with self.braces():
            yield

    # ---- types
    @staticmethod
    def ctype(dtype: Any) -> Tuple[str, str, str]:
        """(storage C type, compute C type, printf format) of an element type."""
        return _ctype(dtype)

    @staticmethod
    def to_storage(code: str, dtype: Any) -> str:
        """C code converting a compute-type value to dtype's storage type."""
        return _to_storage(code, dtype)
