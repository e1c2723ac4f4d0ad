"""The kernel IR: one tree that the tracer builds and every pass and back end reads.

A kernel body is a ``Block`` of ops; the structured ops ``For``, ``If`` and ``While`` own blocks of
their own (regions). Values are SSA-like registers, each defined in one block and usable only
there and in the blocks it encloses. Memory lives in three spaces: global (``Param``), shared
(``Shared``, one array per thread block, ``Barrier`` orders its accesses) and registers (``Reg``;
a register array is ``mutable`` when it must carry a value across iterations or out of a branch,
and is then written by ``Assign``). Scalar kernel arguments passed at launch are
``ScalarParam``s: integers appear in index expressions as the symbolic ``ArgVar``, floats as
``ParamRef`` element references.

The leaf ops are

- ``Param``: a global-memory pointer argument (a tensor's storage), with its element type, the
  alignment of its base pointer and the number of elements it may touch;
- ``Reg``: a register array of ``n`` elements, written once (SSA): every load and every
  arithmetic op makes a new one;
- statements ``Load`` (``dst[i] = param[base + offsets[i]]``), ``Store``
  (``param[base + offsets[i]] = src[i]``), ``Compute`` (element-wise arithmetic) and
  ``Printf``. ``base`` is a symbolic integer of the thread and block indices; ``offsets`` are
  static ints read off the (static) layout. That split is what lets the CUDA printer prove
  16-byte alignment and emit vector loads, and the interpreter gather for all threads at once;
- ``Op``: an instruction of its own (``kernel.instr``), with the ``Access``es it makes.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from ...errors import TraceError
from .symbolic import Expr, Var, is_sym, sym_div

__all__ = ["Access", "Op", "Param", "Reg", "Ref", "Load", "Store", "Compute", "Printf", "KernelIR", "pow2_divisor", "Block", "For", "If", "While", "Barrier", "Assign", "Shared", "ScalarParam", "ParamRef", "LoopVar", "ArgVar", "DimVar", "dim_values", "RegVar", "walk", "thread_env", "stores_by_address"]


def pow2_divisor(n: int) -> int:
    """The largest power of two dividing n (0 stands for 'divisible by anything': returns 0)."""
    n = abs(int(n))
    return n & -n if n else 0


def _align_of(base_align: int, elem_bytes: int, offset: Any) -> int:
    """Bytes of alignment known for the element at ``offset`` of a pointer aligned to base_align."""
    d = sym_div(offset)
    if d == 0:
        return base_align
    return max(min(base_align, pow2_divisor(d * elem_bytes)), elem_bytes)


class Param:
    """A global-memory pointer argument of the kernel."""

    def __init__(self, index: int, name: str, dtype: Any, align: int, length: int):
        self.index = index
        self.name = name
        self.dtype = dtype
        self.align = align  # bytes, of the pointer passed (as declared: what the trace prints)
        self.code_align = 0  # bytes the launch proved from the actual pointer (GPU plans; 0: unknown)
        # bytes every launch's pointer must be aligned to (raw-pointer copies that rely on the address:
        # kernel/instr/cpasync.py _raw_alignment; 0: none), and the program line that needs it
        self.need_align, self.need_align_where = 0, ""
        self.length = length  # elements addressable from the pointer
        self.read = False
        self.written = False

    space = "gmem"
    kind = "pointer"

    def __repr__(self) -> str:
        return f"Param({self.name}: {self.dtype}*, align {self.align}, {self.length} elements)"


class Shared:
    """A shared-memory array of the thread block (``SmemAllocator.allocate_tensor``)."""

    space = "smem"

    def __init__(self, index: int, name: str, dtype: Any, align: int, length: int):
        self.index = index  # among the kernel's shared arrays
        self.name = name
        self.dtype = dtype
        self.align = align
        self.length = length
        self.read = False
        self.written = False
        self.dynamic = False  # True: sized at launch (extern __shared__), counted in the launch's smem
        # index of the array this one shares its memory with (another element type's view of one
        # SmemAllocator region): dynamic arrays of one region start at the same byte on the GPU
        self.alias: Any = None

    @property
    def bytes(self) -> int:
        return -(-self.length * self.dtype.width // 8)  # 4-bit elements: two to a byte

    def __repr__(self) -> str:
        return f"Shared({self.name}: {self.dtype}[{self.length}], align {self.align})"


def dynamic_smem_layout(shared: List[Any]) -> Tuple[Dict[int, int], int]:
    """({array index: byte offset in the block's dynamic shared memory}, total bytes) of a kernel's
    dynamic shared arrays, in order, each at its alignment; an array with ``alias`` starts where
    that array does (a region viewed as several element types), and the region takes the bytes of
    its longest view."""
    extent: Dict[int, int] = {}
    for sh in shared:
        if isinstance(sh, SharedAlias):  # recast_ptr's view: the base's bytes (placed with the base below)
            continue
        if sh.dynamic:
            base = sh.alias if sh.alias is not None else sh.index
            extent[base] = max(extent.get(base, 0), sh.bytes)
    offs: Dict[int, int] = {}
    end = 0
    for sh in shared:
        if not sh.dynamic or sh.alias is not None or isinstance(sh, SharedAlias):
            continue
        al = max(16, sh.align)
        o = -(-end // al) * al
        offs[sh.index] = o
        end = o + extent[sh.index]
    for sh in shared:
        if sh.dynamic and sh.alias is not None and not isinstance(sh, SharedAlias):
            offs[sh.index] = offs[sh.alias]
    for sh in shared:
        if isinstance(sh, SharedAlias) and sh.dynamic and sh.base.index in offs:
            offs[sh.index] = offs[sh.base.index]
    return offs, end


class SharedAlias(Shared):
    """The bytes of a shared array read as another element type (``cute.recast_ptr`` of a pointer into
    shared memory): the same memory, not more of it. Its length follows the base array's (which a
    launch may grow for alignment); it adds no bytes to the block's shared memory. The CPU
    interpreter makes it a numpy view of the base's bytes; the CUDA printer a cast pointer."""

    def __init__(self, index: int, name: str, dtype: Any, base: Shared):
        self.base = base
        super().__init__(index, name, dtype, base.align, 0)

    @property
    def length(self) -> int:  # type: ignore[override]
        return self.base.length * self.base.dtype.bytes // self.dtype.bytes

    @length.setter
    def length(self, n: int) -> None:  # the base's length decides
        pass

    @property
    def align(self) -> int:  # type: ignore[override]
        return self.base.align

    @align.setter
    def align(self, a: int) -> None:
        pass

    @property
    def dynamic(self) -> bool:  # type: ignore[override]
        return self.base.dynamic

    @dynamic.setter
    def dynamic(self, d: bool) -> None:
        pass

    @property
    def bytes(self) -> int:
        return 0  # the base's bytes

    def __repr__(self) -> str:
        return f"SharedAlias({self.name}: {self.dtype} over {self.base.name})"


class ScalarParam:
    """A scalar kernel argument whose value is passed at launch (no new trace for a new value)."""

    kind = "scalar"
    space = "param"

    def __init__(self, index: int, name: str, dtype: Any):
        self.index = index
        self.name = name
        self.dtype = dtype
        self.read = True
        self.written = False
        self.length = 0
        self.align = dtype.bytes

    def __repr__(self) -> str:
        return f"ScalarParam({self.name}: {self.dtype})"


class ParamRef:
    """An element reference to a scalar (float) kernel argument."""

    __slots__ = ("param",)

    def __init__(self, param: ScalarParam):
        self.param = param

    def __repr__(self) -> str:
        return self.param.name


class Reg:
    """A register array: written once (SSA), or ``mutable`` (written by ``Assign``, read through a
    "mov" Compute that snapshots it). ``block`` is where it was defined."""

    __slots__ = ("id", "dtype", "n", "block", "mutable")

    def __init__(self, id: int, dtype: Any, n: int, block: Any = None, mutable: bool = False):
        self.id, self.dtype, self.n = id, dtype, n
        self.block, self.mutable = block, mutable

    @property
    def name(self) -> str:
        return f"r{self.id}"

    def __repr__(self) -> str:
        return f"{self.name}[{self.n}]:{self.dtype}"


# A Ref is (Reg, index) or a Python number (a constant).
Ref = Any


class Load:
    __slots__ = ("dst", "param", "base", "offsets", "loc")

    def __init__(self, dst: Reg, param: Param, base: Any, offsets: Tuple[int, ...]):
        self.dst, self.param, self.base, self.offsets = dst, param, base, offsets
        self.loc: Optional[str] = None  # the user's "file:line" (set by Tracer.emit)

    def __repr__(self) -> str:
        return f"{self.dst!r} = load {self.param.name}[{_s(self.base)} + {list(self.offsets)}]"


class Store:
    __slots__ = ("param", "base", "offsets", "src", "loc")

    def __init__(self, param: Param, base: Any, offsets: Tuple[int, ...], src: Tuple[Ref, ...]):
        self.param, self.base, self.offsets, self.src = param, base, offsets, src
        self.loc: Optional[str] = None  # the user's "file:line" (set by Tracer.emit)

    def __repr__(self) -> str:
        return f"store {self.param.name}[{_s(self.base)} + {list(self.offsets)}] = {_refs_str(self.src)}"


# the approximate forms of cute.math's functions (``fastmath=True``): the CUDA printer gives them the
# hardware's approximate instructions (ex2.approx.ftz, lg2.approx.ftz, ...); the interpreter computes
# them as the exact forms
FAST_MATH = ("exp_fast", "exp2_fast", "log_fast", "log2_fast", "sqrt_fast", "rsqrt_fast", "sin_fast", "cos_fast",
             "tanh_fast")


class Compute:
    """dst[i] = op(args[0][i], args[1][i], ...); each arg is a tuple of Refs (one per element).

    Operands are read as ``src_dtype`` (the destination's type unless given: comparisons read
    their operands' type and make Booleans); ``select`` reads its first operand as a condition;
    ``max``/``min`` of floats propagate NaN (CuTe DSL's arith.maximumf), ``fmax``/``fmin`` ignore it
    (IEEE maxNum: the other operand, as PTX's max.f32);
    ``mov`` copies (it snapshots a mutable register)."""

    __slots__ = ("dst", "op", "args", "src_dtype")

    OPS = ("add", "sub", "mul", "div", "neg", "rcp", "cvt", "max", "min", "fmax", "fmin", "mov", "select", "lt", "le", "gt", "ge",
           "eq", "ne", "and", "or", "not", "abs", "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos",
           "tanh", "floordiv", "mod", "erf", "ceil", "floor", "log10", "tan", "atan",
           "band", "bor", "bxor", "bnot", "shl", "shr") + FAST_MATH  # b*, sh*: integer bitwise ops

    def __init__(self, dst: Reg, op: str, args: Tuple[Tuple[Ref, ...], ...], src_dtype: Any = None):
        assert op in self.OPS, op
        self.dst, self.op, self.args = dst, op, args
        self.src_dtype = src_dtype if src_dtype is not None else dst.dtype

    def __repr__(self) -> str:
        return f"{self.dst!r} = {self.op}({', '.join(_refs_str(a) for a in self.args)})"


class Printf:
    """One line of output per thread. ``parts`` holds strings and ('int', Expr) / ('val', Ref,
    dtype) / ('addr', Param, Expr) items; adjacent strings are joined and empty ones dropped."""

    __slots__ = ("parts",)

    def __init__(self, parts: List[Any]):
        merged: List[Any] = []
        for x in parts:
            if isinstance(x, str) and merged and isinstance(merged[-1], str):
                merged[-1] += x
            elif x != "":
                merged.append(x)
        self.parts = merged

    def __repr__(self) -> str:
        return f"printf{self.parts!r}"


class Assign:
    """dst[index[i]] = src[i] for a mutable register array dst."""

    __slots__ = ("dst", "index", "src")

    def __init__(self, dst: Reg, index: Tuple[int, ...], src: Tuple[Ref, ...]):
        self.dst, self.index, self.src = dst, index, src

    def __repr__(self) -> str:
        return f"{self.dst.name}[{list(self.index)}] := {_refs_str(self.src)}"


class Barrier:
    """``__syncthreads()``: every thread of the block waits here (cute.arch.sync_threads).
    ``loc`` is the user's line (set by ``Tracer.emit``)."""

    __slots__ = ("loc",)

    def __init__(self) -> None:
        self.loc: Optional[str] = None

    def __repr__(self) -> str:
        return "barrier"


class Access:
    """One memory access of an ``Op`` as the bounds checks see it: ``param`` (a Param or Shared)
    at ``base`` (an index expression) plus static ``offsets``; ``is_store`` for writes."""

    __slots__ = ("param", "base", "offsets", "is_store", "op")

    def __init__(self, param: Any, base: Any, offsets: Tuple[int, ...], is_store: bool, op: Any = None):
        self.param, self.base, self.offsets, self.is_store, self.op = param, base, tuple(offsets), is_store, op

    def __repr__(self) -> str:
        return f"{'store' if self.is_store else 'load'} {self.param.name}[{_s(self.base)} + {list(self.offsets)}]"


class Op:
    """Base of the ops that carry their own back ends (the atoms: cp.async, ldmatrix, mma, ...).

    Load, Store, Compute and the regions are known to both back ends; an op of a new kind
    subclasses Op and implements

    - ``interpret(self, b, mask, buffers)``: the CPU back end (``b`` is a
      ``kernel.cpu.context.ExecContext``, one group of warps of a batch of blocks: its module
      docstring lists what an instruction may use; ``mask`` is None or the active threads;
      ``buffers`` the tensors' storage);
    - ``may_wait`` and ``waits_for(self, b, mask)`` (an op at which warps wait for other
      warps, as an mbarrier wait): ``may_wait`` is True, and ``waits_for`` answers None when
      the op can run now, else what it waits for; the CPU scheduler runs other warps meanwhile
      (``kernel.cpu.warps``);
    - ``cuda(self, ctx)``: the CUDA back end; ``ctx`` is the printer's public emit API,
      ``cuda.lowering.LoweringContext`` (``ctx.emit(line)``, ``ctx.fresh(prefix)``, ``ctx.expr(e)``,
      ...), and the op uses nothing else of the printer;
    - ``accesses(self)``: its memory accesses, a list of ``Access``, for the launch's bounds
      checks (an op without memory accesses returns []); the profiler (``cutelab.profile``)
      records them too, each split into instructions as the CUDA printer vectorizes a load or
      store of those offsets (``cuda.vector_plan``), unless the op says otherwise:
    - ``profile(self, access)`` (optional): None, or a dict telling the profiler how the GPU
      executes that access: ``"name"`` (the instruction, e.g. ``"cp.async.cg 16B"``),
      ``"op"`` ("ld", "st", "ldsm": ldmatrix, one 16-byte row address per lane from lanes
      0..lanes-1, or "ldgsts": cp.async, for both its global read and its shared write),
      ``"lanes"`` (ldsm: 8, 16 or 32), ``"plan"`` (the instructions as (first offset,
      elements) pairs over ``access.offsets``). An access with a ``guards`` attribute
      ((condition, polarity) pairs) is recorded only for the threads where they hold; an op
      with a ``dst`` register and only load accesses (ldmatrix) is left out when nothing reads
      ``dst``, as the compiler drops it.

    ``loc`` is the user's source line ("file.py:12") the op was traced at, set by
    ``Tracer.emit`` (read it with ``getattr(op, "loc", None)``: an op made outside a trace has none).
    """

    __slots__ = ("loc",)

    may_wait = False  # whether warps may wait for other warps here (see waits_for)
    # True for an op that may write global memory no kernel argument names (a store through a runtime
    # address, instr/address_access.py): the kernel's pointers may then alias, so the CUDA printer
    # drops __restrict__ and the read-only load path (stores_by_address)
    stores_by_address = False
    min_sm = 0  # the least GPU architecture (e.g. 100: tcgen05 needs sm_100a) whose CUDA has this op

    def waits_for(self, b: Any, mask: Any) -> Optional[str]:
        """CPU: None when the threads of mask can run this op now; else what they wait for."""
        return None

    def ready_threads(self, b: Any, mask: Any) -> Any:
        """CPU, optional: a bool per thread, True where that thread alone could go on past this
        wait (lets the scheduler part a group whose warps wait on different things); None: unknown."""
        return None

    def interpret(self, b: Any, mask: Any, buffers: Any) -> None:  # pragma: no cover - abstract
        raise TraceError(f"the interpreter cannot run op {self!r}")

    def cuda(self, r: Any) -> None:  # pragma: no cover - abstract
        raise TraceError(f"the CUDA back end cannot print op {self!r}")

    def accesses(self) -> List[Access]:
        return []


class Block:
    """A sequence of ops; ``parent`` is the enclosing block (None for the kernel body)."""

    __slots__ = ("ops", "parent")

    def __init__(self, parent: Optional["Block"] = None):
        self.ops: List[Any] = []
        self.parent = parent

    def encloses(self, other: Optional["Block"]) -> bool:
        b = other
        while b is not None:
            if b is self:
                return True
            b = b.parent
        return False

    def lines(self, indent: str) -> List[str]:
        out = []
        for op in self.ops:
            if isinstance(op, (For, If, While)):
                out += op.lines(indent)
            else:
                out.append(indent + repr(op))
        return out


class LoopVar(Var):
    """The induction variable of a ``For``: ranges over [lo, hi] (the loop's possible values);
    ``site``: the user's line of the loop, for error messages (None where unknown)."""

    __slots__ = ("c_name", "site")

    def __init__(self, name: str, lo: int, hi: int, div: int, site: Optional[str] = None):
        Var.__init__(self, "loop." + name, 1)
        self.c_name = name
        self.lo, self.hi, self.div = lo, max(lo, hi), div
        self.site = site


def _value_range(dtype: Any) -> Tuple[int, int]:
    """The values an integer (or Boolean) element type holds."""
    bits = dtype.width
    if dtype.kind == "bool":
        return 0, 1
    if dtype.kind == "uint":
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


class ArgVar(Var):
    """An integer scalar argument of the kernel, its value known only at launch."""

    __slots__ = ("c_name", "param")

    def __init__(self, param: ScalarParam):
        Var.__init__(self, "arg." + param.name, 1)
        self.c_name = param.name
        self.param = param
        self.lo, self.hi = _value_range(param.dtype)
        self.div = 1


# the special registers of a launch's shape: (CuTe DSL's cute.arch name, C text, (upper bound per axis))
_DIMS = {
    "ntid": ("block_dim", "blockDim.{a}", (1024, 1024, 64)),
    "nctaid": ("grid_dim", "gridDim.{a}", ((1 << 31) - 1, 65535, 65535)),
    "nclusterid": ("cluster_dim", "cl_nclusterid_{a}()", ((1 << 31) - 1, 65535, 65535)),
    "cluster_nctaid": ("block_in_cluster_dim", "cl_cluster_nctaid_{a}()", (16, 16, 16)),
    "cluster_nctarank": ("cluster_size", "cl_cluster_nctarank()", (16,)),
}


class DimVar(ArgVar):
    """A dimension of the launch read from its special register (``%ntid``, ``%nctaid``, ``%nclusterid``,
    ``%cluster_nctaid``, ``%cluster_nctarank``): a runtime value, as in CuTe DSL. Its range is every value the
    register can hold, never the launch's, so arithmetic on it stays symbolic at trace time; like a scalar
    argument (``ArgVar``) its value is given where the kernel runs (``dim_values``). The kernel is traced for
    its launch, so ``value`` (the launch's) serves where cutelab needs a static value (a layout's shape, a
    loop's step) and decides a comparison of launch dimensions alone (a preferred-cluster branch)."""

    __slots__ = ("sreg", "axis", "value")

    def __init__(self, sreg: str, axis: str, value: Optional[int] = None):
        _, c, hi = _DIMS[sreg]
        self.value = value  # the launch's, for a layout's static shape (Expr.launch_value); never for arithmetic
        Var.__init__(self, f"arg.%{sreg}.{axis}" if axis else f"arg.%{sreg}", 1)
        self.sreg, self.axis = sreg, axis
        self.c_name = c.format(a=axis)
        self.param = None
        self.lo, self.hi, self.div = 1, hi["xyz".index(axis)] if axis else hi[0], 1

    @property
    def what(self) -> str:
        """``cute.arch.grid_dim()[0]``: where the value comes from, for error messages."""
        name = _DIMS[self.sreg][0]
        return f"cute.arch.{name}()" + (f"[{'xyz'.index(self.axis)}]" if self.axis else "")

    def expr_str(self) -> str:
        return f"%{self.sreg}.{self.axis}" if self.axis else f"%{self.sreg}"


def dim_values(grid: Tuple[int, int, int], block: Tuple[int, int, int],
               cluster: Tuple[int, int, int] = (1, 1, 1)) -> Dict[str, int]:
    """The values of every ``DimVar`` of a launch, by name.

    >>> dim_values((4, 2, 1), (128, 1, 1), (2, 1, 1))["arg.%nclusterid.x"]
    2
    """
    out: Dict[str, int] = {}
    for a, g, b, c in zip("xyz", grid, block, cluster):
        out[f"arg.%ntid.{a}"] = int(b)
        out[f"arg.%nctaid.{a}"] = int(g)
        out[f"arg.%nclusterid.{a}"] = int(g) // int(c)
        out[f"arg.%cluster_nctaid.{a}"] = int(c)
    out["arg.%cluster_nctarank"] = int(cluster[0] * cluster[1] * cluster[2])
    return out


class RegVar(Var):
    """An integer held in a register (a runtime Int32 variable, e.g. a pipeline stage) used in an
    index expression: ``ref`` is its (Reg, i); its range is its type's unless known better.
    ``bits``, where not None, is a possible-bits mask: every value the register holds, as a Python
    int (signed types sign-extended), sets no bit outside it (a negative mask: all high bits);
    carry.Carry proves one for a moving view's offset (analysis.bits.possible_bits reads it)."""

    __slots__ = ("c_name", "ref", "bits")

    def __init__(self, ref: Tuple[Any, int], div: int = 1):
        reg, i = ref
        Var.__init__(self, f"reg.{reg.id}.{i}", 1)
        self.c_name = f"{reg.name}[{i}]"
        self.ref = ref
        self.lo, self.hi = _value_range(reg.dtype)
        self.div = div  # what divides every value it holds (a moving view's offset keeps its alignment)
        self.bits: Optional[int] = None


class For:
    """``for var in range(lo, hi, step)`` as a real loop (bounds may be runtime values)."""

    __slots__ = ("var", "lo", "hi", "step", "body", "unroll")

    def __init__(self, var: LoopVar, lo: Any, hi: Any, step: int, body: Block, unroll: Optional[int]):
        self.var, self.lo, self.hi, self.step, self.body, self.unroll = var, lo, hi, step, body, unroll

    def lines(self, indent: str) -> List[str]:
        u = f" unroll={self.unroll}" if self.unroll is not None else ""
        head = f"{indent}for {self.var.c_name} in range({_s(self.lo)}, {_s(self.hi)}, {self.step}){u}:"
        return [head] + self.body.lines(indent + "  ")


class If:
    """``if cond: then else: orelse``; cond is a symbolic condition (an Expr) or a register Ref."""

    __slots__ = ("cond", "then", "orelse")

    def __init__(self, cond: Any, then: Block, orelse: Block):
        self.cond, self.then, self.orelse = cond, then, orelse

    def lines(self, indent: str) -> List[str]:
        out = [f"{indent}if {_ref_str(self.cond)}:"] + self.then.lines(indent + "  ")
        if self.orelse.ops:
            out += [f"{indent}else:"] + self.orelse.lines(indent + "  ")
        return out


class While:
    """``while cond: body``: ``before`` computes ``cond`` each time round."""

    __slots__ = ("before", "cond", "body")

    def __init__(self, before: Block, body: Block):
        self.before, self.cond, self.body = before, None, body

    def lines(self, indent: str) -> List[str]:
        return ([f"{indent}while:"] + self.before.lines(indent + "  ")
                + [f"{indent}  test {_ref_str(self.cond)}"] + self.body.lines(indent + "  "))


def stores_by_address(ir: Any) -> bool:
    """True when an op of ir may write memory through a runtime address (Op.stores_by_address)."""
    return any(getattr(op, "stores_by_address", False) for op in walk(ir.body))


def walk(block: Block):
    """Every op of block and of the regions inside it, in program order."""
    for op in block.ops:
        yield op
        if isinstance(op, For):
            yield from walk(op.body)
        elif isinstance(op, If):
            yield from walk(op.then)
            yield from walk(op.orelse)
        elif isinstance(op, While):
            yield from walk(op.before)
            yield from walk(op.body)


def _ref_str(r: Any) -> str:
    if isinstance(r, tuple):
        return f"{r[0].name}[{r[1]}]"
    return _s(r)


def _s(x: Any) -> str:
    return x.expr_str() if is_sym(x) else str(x)


def _refs_str(refs: Sequence[Ref]) -> str:
    out = []
    for r in refs[:4]:
        out.append(_ref_str(r) if isinstance(r, (tuple, Expr)) else repr(r))
    return "(" + ", ".join(out) + (", ..." if len(refs) > 4 else "") + ")"


class KernelIR:
    """A traced kernel: its name, parameters (in call order), statements and launch shape."""

    cluster: Tuple[int, int, int] = (1, 1, 1)  # the launch's cluster shape (the tracer sets it)

    def __init__(self, name: str, params: List[Any], body: Block, regs: List[Reg],
                 grid: Tuple[int, int, int], block: Tuple[int, int, int], shared: Optional[List[Shared]] = None,
                 dynamic_smem: int = 0):
        self.name = name
        self.params = params
        self.body = body
        self.regs = regs
        self.grid = grid
        self.block = block
        self.shared = shared or []
        self.dynamic_smem = dynamic_smem  # bytes of shared memory asked for at launch (smem=)
        self.cluster: Tuple[int, int, int] = (1, 1, 1)  # thread-block cluster shape (instr/cluster.py)
        self.min_blocks = 0  # launch(min_blocks_per_mp=): __launch_bounds__'s minimum blocks per SM (0: none)
        self.cooperative = False  # launch(cooperative=True): every CTA resident at once (launch/cooperative.py)

    @property
    def stmts(self) -> List[Any]:
        """The top-level ops of the body (all ops when the kernel is straight-line code)."""
        return self.body.ops

    @property
    def structured(self) -> bool:
        """True when the kernel has regions, shared memory, barriers, mutable registers or scalar
        arguments: the CUDA printer's schedule rewrites apply only to straight-line kernels."""
        if self.shared or any(p.kind == "scalar" for p in self.params) or any(r.mutable for r in self.regs):
            return True
        return any(isinstance(op, (For, If, While, Barrier)) for op in self.body.ops)

    def ops(self):
        return walk(self.body)

    @property
    def num_threads(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    def __repr__(self) -> str:
        cl = f" cluster={self.cluster}" if self.cluster != (1, 1, 1) else ""
        lines = [f"kernel {self.name}({', '.join(map(repr, self.params))}) grid={self.grid} block={self.block}{cl}"]
        lines += [f"  {sh!r}" for sh in self.shared]
        lines += self.body.lines("  ")
        return "\n".join(lines)


def thread_env(grid: tuple, block: tuple, first_block: int, n_blocks: int,
               cluster: tuple = (1, 1, 1)) -> Dict[str, Any]:
    """Index arrays (int64, one entry per thread) of the thread and block index variables, for blocks
    [first_block, first_block + n_blocks) of a launch, and the launch's dimensions (``dim_values``)."""
    import numpy as np

    bx, by, bz = block
    gx, gy, gz = grid
    nt = bx * by * bz
    lin = np.arange(n_blocks * nt, dtype=np.int64)
    t = lin % nt
    b = first_block + lin // nt
    return {
        "tid.x": t % bx, "tid.y": (t // bx) % by, "tid.z": t // (bx * by),
        "bid.x": b % gx, "bid.y": (b // gx) % gy, "bid.z": b // (gx * gy),
        **dim_values(grid, block, cluster),
    }
