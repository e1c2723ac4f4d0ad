"""Blackwell (SM100) ``tcgen05.mma`` ops, as CuTe DSL 4.8.1 has them in ``cute.nvgpu.tcgen05``.

One thread issues a UMMA for its CTA (``CtaGroup.ONE``) or for a pair of CTAs (``CtaGroup.TWO``).
A and B are read from shared memory through descriptors (A may instead live in tensor memory,
``OperandSource.TMEM``); the accumulator C lives in tensor memory. So the atom's "threads" are
CTAs: ThrID is ``1:0`` for one CTA and ``2:1`` for a pair, and each CTA's value mode is its whole
share of the tile, as in CuTe (include/cute/atom/mma_traits_sm100.hpp):

    one CTA:  A (1,(M,K)):(M,(1,M))       B (1,(N,K)):(N,(1,N))       C (1,(M,N)):(M,(1,M))
    two CTAs: A (2,(M/2,K)):(M/2,(1,M))   B (2,(N/2,K)):(N/2,(1,N))   C (2,(M/2,N)):(M/2,(1,M))

The fragments of a tiled UMMA are not registers: ``make_fragment_C`` (and ``make_fragment_A`` of an
A in TMEM) give tensor-memory tensors (cutelab.nvgpu.tcgen05.tmem), ``make_fragment_A/B`` of a
shared-memory partition give a tensor of shared-memory descriptors.

>>> import cutelab as cute
>>> from cutelab.nvgpu import tcgen05, OperandMajorMode
>>> op = tcgen05.MmaF16BF16Op(cute.Float16, cute.Float32, (256, 64), tcgen05.CtaGroup.TWO,
...                           tcgen05.OperandSource.SMEM, OperandMajorMode.K, OperandMajorMode.K)
>>> print(cute.make_mma_atom(op))
MMA Atom
  ThrID:       2:1
  Shape MNK:   (256,64,16)
  TV Layout A: (2,(128,16)):(128,(1,256))
  TV Layout B: (2,(32,16)):(32,(1,64))
  TV Layout C: (2,(128,64)):(128,(1,256))
"""

from __future__ import annotations

import enum
from typing import Any

from ... import int_tuple as it
from ...errors import LayoutError
from ...layout import Layout
from ...numeric import (
    BFloat16, Float4E2M1FN, Float6E2M3FN, Float6E3M2FN, Float8E4M3FN, Float8E5M2, Float8E8M0FNU, Float16, Float32,
    Int8, Int32, TFloat32, Uint8,
)
from ..mma_atom import MmaOp as _AtomMmaOp
from ..mma_atom import dtype_name
from ..universal_mma import OperandMajorMode
from .helpers import SmemLayoutAtomKind  # noqa: F401  (CuTe DSL defines it in tcgen05.mma: tcgen05.mma.SmemLayoutAtomKind)

__all__ = [
    "OperandSource", "CtaGroup", "Field", "Tcgen05MmaOp", "MmaOp", "BlockScaledMmaOp", "MmaTF32Op", "MmaF16BF16Op",
    "MmaI8Op", "MmaFP8Op", "MmaF8F6F4Op", "MmaMXF8Op", "MmaMXF8F6F4Op", "MmaMXF4Op", "MmaMXF4NVF4Op",
]


class _Enum(enum.Enum):
    def __str__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    def __repr__(self) -> str:
        return f"<{type(self).__name__}.{self.name}>"


class OperandSource(_Enum):
    """Where the A operand of a UMMA lives: tensor memory or shared memory (a descriptor)."""

    TMEM = "tmem"
    SMEM = "smem_desc"


class CtaGroup(_Enum):
    """The ``cta_group`` of a UMMA: one CTA, or the two CTAs of a pair issuing one MMA."""

    ONE = 1
    TWO = 2


class Field(_Enum):
    """The runtime fields of a UMMA atom (``atom.set(Field.ACCUMULATE, True)``)."""

    NEGATE_A = "neg_a"
    NEGATE_B = "neg_b"
    ACCUMULATE = "accum_c"
    SFA = "sf_a"
    SFB = "sf_b"
    METADATA = "e"
    DISABLE_OUTPUT_LANE = "disable_output_lane"


_F8F6F4 = (Float8E5M2, Float8E4M3FN, Float6E3M2FN, Float6E2M3FN, Float4E2M1FN)
_F8F6F4_NAMES = "Float8E5M2, Float8E4M3FN, Float6E3M2FN, Float6E2M3FN, or Float4E2M1FN"


class Tcgen05MmaOp(_AtomMmaOp):
    """Base class of the tcgen05 MMA ops."""

    __slots__ = ("a_dtype", "b_dtype", "acc_dtype", "shape_mnk", "cta_group", "a_src", "a_major_mode",
                 "b_major_mode", "_args")
    descriptive_name = "tcgen05 MMA Operation"
    _instruction_k = 0
    _tmem_a_major_msg = "a operand must be of major-mode k when coming from tmem"  # CuTe DSL's words
    _fields: tuple = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")

    def _set(self, **kw: Any) -> None:
        for k, v in kw.items():
            object.__setattr__(self, k, v)

    def _fail(self, msg: str) -> LayoutError:
        return LayoutError(f"tcgen05.{type(self).__name__}({self._args}): {msg}")

    # the checks common to every UMMA, in CuTe DSL's order (MmaOp.__post_init__)
    def _check_common(self) -> None:
        if not isinstance(self.cta_group, CtaGroup):
            raise self._fail("expects the 'cta_group' Op parameter to be a tcgen05.CtaGroup instance")
        if not isinstance(self.a_src, OperandSource):
            raise self._fail("expects the 'a_src' Op parameter to be a tcgen05.OperandSource instance")
        for f in ("a_major_mode", "b_major_mode"):
            v = getattr(self, f)
            if isinstance(v, str):
                try:
                    self._set(**{f: OperandMajorMode(v)})
                except ValueError:
                    pass
            if not isinstance(getattr(self, f), OperandMajorMode):
                raise self._fail(f"expects the '{f}' Op parameter to be a cute.nvgpu.OperandMajorMode or "
                                 f"tcgen05.OperandMajorMode (deprecated) instance")
        shp = self.shape_mnk
        if (not isinstance(shp, tuple) or len(shp) not in (2, 3) or it.depth(shp) != 1
                or not all(type(x) is int for x in shp)):
            raise self._fail(f"expected a flat rank 2 or 3 tuple for the 'shape_mnk' Op parameter, but got "
                             f"{shp}")

    def _check_k(self) -> None:
        k = self._instruction_k
        if len(self.shape_mnk) == 2:
            self._set(shape_mnk=(*self.shape_mnk, k))
        if self.shape_mnk[2] != k:
            raise self._fail(f"expects the instruction extent in the K-mode to be {k}, but got {self.shape_mnk[2]}")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._args})"

    def __eq__(self, other: Any) -> bool:
        return type(other) is type(self) and all(getattr(self, f) == getattr(other, f) for f in self._fields)

    def __hash__(self) -> int:
        return hash((type(self).__name__,) + tuple(str(getattr(self, f)) for f in self._fields))

    # ---- the atom
    @property
    def _n_cta(self) -> int:
        return self.cta_group.value

    def _atom_layouts(self) -> tuple:
        if self.a_src is OperandSource.TMEM and self.a_major_mode is not OperandMajorMode.K:
            raise self._fail(self._tmem_a_major_msg)
        m, n, k = self.shape_mnk
        c = self._n_cta
        mm, nn = m // c, n // c
        thr = Layout._raw(1, 0) if c == 1 else Layout._raw(2, 1)
        a = Layout._raw((c, (mm, k)), (mm, (1, m)))
        b = Layout._raw((c, (nn, k)), (nn, (1, n)))
        cl = Layout._raw((c, (mm, n)), (mm, (1, m)))
        return self.shape_mnk, thr, a, b, cl

    def _fragment_dtypes(self) -> tuple:
        return self.a_dtype, self.b_dtype, self.acc_dtype

    def _runtime_fields(self) -> dict:
        return {f.value: False for f in (Field.ACCUMULATE, Field.NEGATE_A, Field.NEGATE_B)}

    def _operand_in_smem(self, operand: str) -> bool:
        return operand == "B" or (operand == "A" and self.a_src is OperandSource.SMEM)

    def _make_fragment(self, what: str, input: Any, atom: Any) -> Any:
        """make_fragment_A/B/C of a tiled UMMA: tensor memory or shared-memory descriptors."""
        from .tmem import make_umma_fragment

        return make_umma_fragment(self, what, input, atom)


def _fmt_args(*pairs: Any) -> str:
    return ", ".join(f"{k}={dtype_name(v) if k.endswith('dtype') else it.tuple_str(v) if isinstance(v, tuple) else v}"
                     for k, v in pairs)


class MmaOp(Tcgen05MmaOp):
    """A dense UMMA (``tcgen05.mma.cta_group.kind``): M in {64, 128} for one CTA, {128, 256} for two."""

    _fields = ("a_dtype", "b_dtype", "acc_dtype", "shape_mnk", "cta_group", "a_src", "a_major_mode", "b_major_mode")

    def _init(self, a_dtype: Any, b_dtype: Any, acc_dtype: Any, shape: Any, cta_group: Any, a_src: Any,
              a_major_mode: Any, b_major_mode: Any, args: str) -> None:
        self._set(a_dtype=a_dtype, b_dtype=b_dtype, acc_dtype=acc_dtype, shape_mnk=shape, cta_group=cta_group,
                  a_src=a_src, a_major_mode=a_major_mode, b_major_mode=b_major_mode, _args=args)
        self._check_common()
        m, n = self.shape_mnk[0], self.shape_mnk[1]
        b8_mn = getattr(b_dtype, "width", 0) == 8 and self.b_major_mode is OperandMajorMode.MN
        if self.cta_group is CtaGroup.ONE:
            if m not in (64, 128):
                raise self._fail(f"expects the M-mode to be 64 or 128, but got {m}")
            step, lo = (16, 16) if b8_mn else (8, 8)
        else:
            if m not in (128, 256):
                raise self._fail(f"expects the M-mode to be 128 or 256, but got {m}")
            step, lo = (32, 32) if b8_mn else (16, 16)
        if n < lo or n > 256 or n % step:
            raise self._fail(f"expects the N-mode to satisfy {lo} <= N <= 256 and N % {step} == 0, but got {n}")
        self._verify()
        self._check_k()

    def _verify(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def __str__(self) -> str:
        return (
            self.descriptive_name
            + f"\n  A data type           = {dtype_name(self.a_dtype)}"
            + f"\n  B data type           = {dtype_name(self.b_dtype)}"
            + f"\n  Accumulator data type = {dtype_name(self.acc_dtype)}"
            + f"\n  CTA group             = {self.cta_group}"
            + f"\n  A source location     = {self.a_src}"
            + f"\n  A major mode          = {self.a_major_mode}"
            + f"\n  B major mode          = {self.b_major_mode}"
            + f"\n  Instruction shape MNK = {self.shape_mnk}"
        )


def _common_args(shape: Any, cta_group: Any, a_src: Any, *majors: Any) -> tuple:
    out = [("instruction_shape", shape), ("cta_group", cta_group), ("a_src", a_src)]
    if majors:
        out += [("a_major_mode", majors[0]), ("b_major_mode", majors[1])]
    return tuple(out)


def _shape(s: Any) -> Any:
    return s  # a list is refused as the DSL refuses it (not a tuple)


class MmaTF32Op(MmaOp):
    """TF32 UMMA (``.kind::tf32``): tf32 x tf32 -> f32, K = 8."""

    descriptive_name = "tcgen05 TF32 MMA Operation"
    _instruction_k = 8

    def __init__(self, instruction_shape: Any, cta_group: Any, a_src: Any, a_major_mode: Any, b_major_mode: Any):
        args = _fmt_args(*_common_args(instruction_shape, cta_group, a_src, a_major_mode, b_major_mode))
        self._init(TFloat32, TFloat32, Float32, _shape(instruction_shape), cta_group, a_src, a_major_mode,
                   b_major_mode, args)

    def _verify(self) -> None:
        pass


class _ABAccOp(MmaOp):
    def __init__(self, ab_dtype: Any, acc_dtype: Any, instruction_shape: Any, cta_group: Any, a_src: Any,
                 a_major_mode: Any, b_major_mode: Any):
        args = _fmt_args(("ab_dtype", ab_dtype), ("acc_dtype", acc_dtype),
                         *_common_args(instruction_shape, cta_group, a_src, a_major_mode, b_major_mode))
        self._init(ab_dtype, ab_dtype, acc_dtype, _shape(instruction_shape), cta_group, a_src, a_major_mode,
                   b_major_mode, args)


class MmaF16BF16Op(_ABAccOp):
    """F16/BF16 UMMA (``.kind::f16``): f16 -> f16 or f32, bf16 -> f32 (f16 accepted as the DSL does); K = 16."""

    descriptive_name = "tcgen05 F16/BF16 MMA Operation"
    _instruction_k = 16

    def _verify(self) -> None:
        if self.a_dtype not in (Float16, BFloat16):
            raise self._fail("expects the 'ab_dtype' Op parameter to be one of Float16 or BFloat16")
        if self.acc_dtype not in (Float16, Float32):
            raise self._fail("expects the 'acc_dtype' Op parameter to be one of Float16 or Float32")


class MmaFP8Op(_ABAccOp):
    """FP8 UMMA (``.kind::f8f6f4`` with e4m3/e5m2 for both): -> f16 or f32; K = 32."""

    descriptive_name = "tcgen05 F8 MMA Operation"
    _instruction_k = 32

    def _verify(self) -> None:
        if self.a_dtype not in (Float8E5M2, Float8E4M3FN):
            raise self._fail("expects the 'ab_dtype' Op parameter to be one of Float8E5M2, Float8E4M3FN")
        if self.acc_dtype not in (Float16, Float32):
            raise self._fail("expects the 'acc_dtype' Op parameter to be one of Float16 or Float32")


class MmaI8Op(MmaOp):
    """Int8 UMMA (``.kind::i8``): s8/u8 (the same for A and B) -> s32; K = 32."""

    descriptive_name = "tcgen05 I8 MMA Operation"
    _instruction_k = 32

    def __init__(self, ab_dtype: Any, instruction_shape: Any, cta_group: Any, a_src: Any, a_major_mode: Any,
                 b_major_mode: Any):
        args = _fmt_args(("ab_dtype", ab_dtype),
                         *_common_args(instruction_shape, cta_group, a_src, a_major_mode, b_major_mode))
        self._init(ab_dtype, ab_dtype, Int32, _shape(instruction_shape), cta_group, a_src, a_major_mode,
                   b_major_mode, args)

    def _verify(self) -> None:
        if self.a_dtype not in (Int8, Uint8):
            raise self._fail("expects the 'ab_dtype' Op parameter to be one of Int8 or Uint8")


class MmaF8F6F4Op(MmaOp):
    """F8F6F4 UMMA (``.kind::f8f6f4``): A and B each e5m2, e4m3, e3m2, e2m3 or e2m1 -> f16 or f32; K = 32."""

    descriptive_name = "tcgen05 F8F6F4 MMA Operation"
    _instruction_k = 32

    def __init__(self, a_dtype: Any, b_dtype: Any, acc_dtype: Any, instruction_shape: Any, cta_group: Any,
                 a_src: Any, a_major_mode: Any, b_major_mode: Any):
        args = _fmt_args(("a_dtype", a_dtype), ("b_dtype", b_dtype), ("acc_dtype", acc_dtype),
                         *_common_args(instruction_shape, cta_group, a_src, a_major_mode, b_major_mode))
        self._init(a_dtype, b_dtype, acc_dtype, _shape(instruction_shape), cta_group, a_src, a_major_mode,
                   b_major_mode, args)

    def _verify(self) -> None:
        if self.a_dtype not in _F8F6F4:
            raise self._fail(f"expects the 'a_dtype' Op parameter to be one of {_F8F6F4_NAMES}")
        if self.b_dtype not in _F8F6F4:
            raise self._fail(f"expects the 'b_dtype' Op parameter to be one of {_F8F6F4_NAMES}")
        if self.acc_dtype not in (Float16, Float32):
            raise self._fail("expects the 'acc_dtype' Op parameter to be one of Float16 or Float32")


# --------------------------------------------------------------------------- block-scaled

class BlockScaledMmaOp(Tcgen05MmaOp):
    """A block-scaled UMMA (``.kind::mxf8f6f4`` / ``mxf4`` / ``mxf4nvf4``, ``.block_scale``): M = 128 for
    one CTA, 128 or 256 for two; scale factors of sf_dtype, one per sf_vec_size elements of K."""

    __slots__ = ("sf_dtype", "sf_vec_size")
    _tmem_a_major_msg = "a operand must be k-major when sourced from tmem"
    _fields = ("a_dtype", "b_dtype", "acc_dtype", "sf_dtype", "sf_vec_size", "shape_mnk", "cta_group", "a_src",
               "a_major_mode", "b_major_mode")

    def _init(self, a_dtype: Any, b_dtype: Any, sf_dtype: Any, sf_vec: int, shape: Any, cta_group: Any, a_src: Any,
              a_major_mode: Any, b_major_mode: Any, args: str) -> None:
        self._set(a_dtype=a_dtype, b_dtype=b_dtype, acc_dtype=Float32, sf_dtype=sf_dtype, sf_vec_size=sf_vec,
                  shape_mnk=shape, cta_group=cta_group, a_src=a_src, a_major_mode=a_major_mode,
                  b_major_mode=b_major_mode, _args=args)
        self._check_common()
        m, n = self.shape_mnk[0], self.shape_mnk[1]
        if self.cta_group is CtaGroup.ONE:
            if m != 128:
                raise self._fail(f"expects the M-mode to be 128, but got {m}")
            lo = 8
        else:
            if m not in (128, 256):
                raise self._fail(f"expects the M-mode to be 128 or 256, but got {m}")
            lo = 16
        if n < lo or n > 256 or n % lo:
            raise self._fail(f"expects the N-mode to satisfy {lo} <= N <= 256 and N % {lo} == 0, but got {n}")
        self._verify()
        self._check_k()

    def _verify(self) -> None:
        pass

    def _runtime_fields(self) -> dict:
        # SFA / SFB: the tensor-memory addresses of the scale factors (set inside a kernel with
        # tiled_mma.set(Field.SFA, tCtSFA[...].iterator); kernel/instr/tcgen05_blockscaled.py)
        return {f.value: False for f in (Field.ACCUMULATE, Field.NEGATE_A, Field.NEGATE_B, Field.SFA, Field.SFB)}

    def __str__(self) -> str:
        return (
            self.descriptive_name
            + f"\n  A data type               = {dtype_name(self.a_dtype)}"
            + f"\n  B data type               = {dtype_name(self.b_dtype)}"
            + f"\n  Accumulator data type     = {dtype_name(self.acc_dtype)}"
            + f"\n  Scale factor data type    = {dtype_name(self.sf_dtype)}"
            + f"\n  Scale factor vector size  = {self.sf_vec_size}"
            + f"\n  CTA group                 = {self.cta_group}"
            + f"\n  A source location         = {self.a_src}"
            + f"\n  A major mode              = {self.a_major_mode}"
            + f"\n  B major mode              = {self.b_major_mode}"
            + f"\n  Instruction shape MNK     = {self.shape_mnk}"
        )


class MmaMXF8Op(BlockScaledMmaOp):
    """MXF8 block-scaled UMMA: e4m3/e5m2 (the same for A and B) x e8m0 scales per 32 -> f32; K = 32."""

    descriptive_name = "tcgen05 MXF8 BlockScaled MMA Operation"
    _instruction_k = 32

    def __init__(self, ab_dtype: Any, instruction_shape: Any, cta_group: Any, a_src: Any, a_major_mode: Any,
                 b_major_mode: Any):
        args = _fmt_args(("ab_dtype", ab_dtype),
                         *_common_args(instruction_shape, cta_group, a_src, a_major_mode, b_major_mode))
        self._init(ab_dtype, ab_dtype, Float8E8M0FNU, 32, _shape(instruction_shape), cta_group, a_src,
                   a_major_mode, b_major_mode, args)

    def _verify(self) -> None:
        if self.a_dtype not in (Float8E5M2, Float8E4M3FN):
            raise self._fail("expects the 'ab_dtype' Op parameter to be one of Float8E5M2 or Float8E4M3FN")


class MmaMXF8F6F4Op(BlockScaledMmaOp):
    """MXF8F6F4 block-scaled UMMA: A and B each f8/f6/f4, e8m0 scales per 32 -> f32; K = 32."""

    descriptive_name = "tcgen05 MXF8F6F4 BlockScaled MMA Operation"
    _instruction_k = 32

    def __init__(self, a_dtype: Any, b_dtype: Any, instruction_shape: Any, cta_group: Any, a_src: Any,
                 a_major_mode: Any, b_major_mode: Any):
        args = _fmt_args(("a_dtype", a_dtype), ("b_dtype", b_dtype),
                         *_common_args(instruction_shape, cta_group, a_src, a_major_mode, b_major_mode))
        self._init(a_dtype, b_dtype, Float8E8M0FNU, 32, _shape(instruction_shape), cta_group, a_src, a_major_mode,
                   b_major_mode, args)

    def _verify(self) -> None:
        if self.a_dtype not in _F8F6F4:
            raise self._fail(f"expects the 'a_dtype' Op parameter to be one of {_F8F6F4_NAMES}")
        if self.b_dtype not in _F8F6F4:
            raise self._fail(f"expects the 'b_dtype' Op parameter to be one of {_F8F6F4_NAMES}")


class MmaMXF4Op(BlockScaledMmaOp):
    """MXF4 block-scaled UMMA: e2m1 x e2m1 with e8m0 scales per 32 -> f32; K-major; K = 64."""

    descriptive_name = "tcgen05 MXF4 BlockScaled MMA Operation"
    _instruction_k = 64

    def __init__(self, instruction_shape: Any, cta_group: Any, a_src: Any):
        args = _fmt_args(*_common_args(instruction_shape, cta_group, a_src))
        self._init(Float4E2M1FN, Float4E2M1FN, Float8E8M0FNU, 32, _shape(instruction_shape), cta_group, a_src,
                   OperandMajorMode.K, OperandMajorMode.K, args)


class MmaMXF4NVF4Op(BlockScaledMmaOp):
    """MXF4/NVF4 block-scaled UMMA: e2m1 x e2m1 with e8m0 or e4m3 scales per 16 -> f32; K-major; K = 64."""

    descriptive_name = "tcgen05 MXF4NVF4 BlockScaled MMA Operation"
    _instruction_k = 64

    def __init__(self, sf_dtype: Any, instruction_shape: Any, cta_group: Any, a_src: Any):
        args = _fmt_args(("sf_dtype", sf_dtype), *_common_args(instruction_shape, cta_group, a_src))
        self._init(Float4E2M1FN, Float4E2M1FN, sf_dtype, 16, _shape(instruction_shape), cta_group, a_src,
                   OperandMajorMode.K, OperandMajorMode.K, args)

    def _verify(self) -> None:
        if self.sf_dtype not in (Float8E8M0FNU, Float8E4M3FN):
            raise self._fail("expects the 'sf_dtype' Op parameter to be one of Float8E8M0FNU")
