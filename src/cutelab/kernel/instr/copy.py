"""``cute.copy`` inside a traced kernel: a universal copy (per-element loads and stores,
vectorised by the CUDA printer where the layouts allow), optionally predicated.

Outside a kernel ``cute.copy`` is the host copy of ``cutelab.nvgpu`` (when present); the
dispatcher ``make_copy`` picks by whether a kernel is being traced.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from ... import int_tuple as it
from ...errors import TraceError
from ..frontend.control import predicate_flag as _flag
from ..frontend.trace import _static_offsets, current, tracing, user_line

__all__ = ["kernel_copy", "make_copy"]


def _packs_narrow_elements(atom: Any, vt: Any, src: Any, dst: Any) -> bool:
    """Whether a universal copy atom of a wider value type (e.g. Float32) copying tensors of a narrower
    one (e.g. Float16: CUTLASS's SM100 tutorials store f16 through an f32 store atom) moves the same
    elements as an element-wise copy: CuTe DSL reinterprets each run of width(vt)/width(element)
    elements as one value, which is the element-wise copy when every such run is consecutive and
    aligned in both tensors (checked here; otherwise the width mismatch is an error)."""
    from ...nvgpu.universal_copy import CopyUniversalOp

    et_s, et_d = src.element_type, dst.element_type
    if not isinstance(getattr(atom, "op", None), CopyUniversalOp) or et_s is None or et_d is None:
        return False
    if et_s.name != et_d.name or et_s.width >= vt.width or vt.width % et_s.width:
        return False
    r = vt.width // et_s.width
    for x in (src, dst):
        try:
            offs = _static_offsets(x.layout, "cute.copy")
        except Exception:  # noqa: BLE001 - not a static layout: not provably the same copy
            return False
        if len(offs) % r:
            return False
        runs = offs.reshape(-1, r)
        if (runs[:, 0] % r).any() or ((runs - runs[:, :1]) != list(range(r))).any():
            return False
        if not isinstance(x.offset, int) and getattr(x, "memspace", "") == "rmem":
            return False
    return True


def kernel_copy(atom: Any, src: Any, dst: Any, *, pred: Optional[Any] = None, **kwargs: Any) -> None:
    """Copy src into dst in a kernel; pred (one flag per element, one per atom call, CuTe DSL's
    profile (ATOM_REST, REST...) for a value mode (ATOM_V, ATOM_REST), or one per value-mode
    column, profile (REST...)) leaves the elements whose flag is False untouched."""
    from .cpasync import cp_async_copy, is_cp_async

    kwargs.pop("loc", None)  # MLIR's source location and insertion point (CuTe DSL's copy takes them; libraries
    kwargs.pop("ip", None)   # pass their own on): nothing to do with them here
    if is_cp_async(atom):  # cp.async: its own op (kernel/instr/cpasync.py)
        return cp_async_copy(atom, src, dst, pred)
    t = current("cute.copy")
    from .ldmatrix import is_ldmatrix, is_stmatrix, kernel_ldmatrix, kernel_stmatrix  # warp-collective copies
    from .tma_copy import tma_copy  # SM90 TMA atoms carry their own copy op

    if is_ldmatrix(getattr(atom, "op", None)):
        return kernel_ldmatrix(atom, src, dst, pred=pred)
    if is_stmatrix(getattr(atom, "op", None)):
        return kernel_stmatrix(atom, src, dst, pred=pred)
    if tma_copy(atom, src, dst, dict(kwargs, pred=pred)):
        return
    from .bulk_copy import bulk_copy  # SM90 non-tensor bulk copies (cp.async.bulk)

    if bulk_copy(atom, src, dst, dict(kwargs, pred=pred)):
        return
    from .tcgen05_tmem import tmem_copy  # SM100 tcgen05.ld / tcgen05.st

    if tmem_copy(atom, src, dst, dict(kwargs, pred=pred)):
        return
    from .tcgen05_cp import s2t_copy  # SM100 tcgen05.cp (shared -> tensor memory)

    if s2t_copy(atom, src, dst, dict(kwargs, pred=pred)):
        return
    from .cluster import dsmem_copy  # st.async into a peer CTA's shared memory

    if dsmem_copy(atom, src, dst, dict(kwargs, pred=pred)):
        return
    n_src, n_dst = it.product(src.layout.shape), it.product(dst.layout.shape)
    if n_src != n_dst:
        raise TraceError(f"kernel {t.name}: cute.copy from {src} to {dst}: sizes differ ({n_src} != {n_dst})")
    vt = getattr(atom, "value_type", None)
    wide = vt is not None and _packs_narrow_elements(atom, vt, src, dst)
    for name, x in (("source", src), ("destination", dst)):
        et = x.element_type
        if vt is not None and et is not None and et.width != vt.width and not wide:
            raise TraceError(f"kernel {t.name}: cute.copy: the {name} holds {et} but the atom copies {vt}")
    if not wide:
        _check_vector_alignment(t, atom, src, dst)
    from .atomics import ordered_copy  # CopyG2ROp/CopyR2GOp with a memory order: ld/st.<sem>.<scope>, element-wise

    if ordered_copy(atom, src, dst, pred, t):
        return
    if pred is None:
        dst.store(src.load())
        return
    n_pred = it.product(pred.layout.shape)
    shp = src.layout.shape
    v = it.product(shp[0]) if isinstance(shp, tuple) and len(shp) > 1 else 1
    # the run of elements one flag covers: one element; the first sub-mode of the value mode (CuTe DSL:
    # a value mode (ATOM_V, ATOM_REST) takes a pred of profile (ATOM_REST, REST...)); one atom call;
    # the whole value mode (a pred of profile (REST...))
    runs = [1]
    if isinstance(shp, tuple) and len(shp) > 1 and isinstance(shp[0], tuple) and len(shp[0]) > 1:
        runs.append(it.product(shp[0][0]))
    runs += [_atom_values(atom), v]
    g = next((g for g in runs if g >= 1 and n_pred * g == n_src and (g == 1 or v % g == 0)), None)
    if g is None:
        raise TraceError(f"kernel {t.name}: cute.copy: pred {pred} has {n_pred} flags; for the source {src} it must "
                         f"have one per element ({n_src}) or one per run of " +
                         ", ".join(str(r) for r in dict.fromkeys(runs[1:]) if r > 1 and n_src % r == 0) +
                         " elements of the value mode (CuTe DSL's profile (ATOM_REST, REST...))")
    groups = [(list(range(r * g, r * g + g)), r) for r in range(n_pred)]
    flags = [_flag(pred[r]) for _, r in groups]  # all read before the first branch: symbolic ones stay symbolic
    if all(f is True for f in flags):  # proved (or statically) true everywhere: one copy, which the printer vectorises
        dst.store(src.load())
        return
    def move(elems: list, r: int) -> None:
        key = _group_key(shp, len(elems), r) if len(elems) > 1 else None
        if key is not None:  # one atom call or value-mode column: one load and one store, which the printer vectorises
            dst[key].store(src[key].load())
        else:
            for i in elems:
                dst[i] = src[i]

    for (elems, r), f in zip(groups, flags):
        if f is True:
            move(elems, r)
        elif f is False:
            continue
        else:
            op = t.begin_if(f)
            outer = t.cur
            t.cur = op.then
            move(elems, r)
            t.cur = outer


def _atom_values(atom: Any) -> int:
    """The elements one call of the atom moves (num_bits_per_copy over the value type's width)."""
    vt = getattr(atom, "value_type", None)
    bits = getattr(atom, "num_bits_per_copy", None) or 0
    if vt is None or not bits or bits <= vt.width:
        return 1
    return bits // vt.width


def _group_key(shp: Any, n: int, r: int) -> Any:
    """The slice of a ``(V, REST...)`` tensor that is the r-th run of n consecutive elements: the
    r-th column of the value mode (n = size of V), or, with V = (ATOM_V, ATOM_REST...) and
    n = ATOM_V, the r-th atom call; None when the value mode is not laid out that way."""
    m0, rest = shp[0], tuple(shp[1:])
    if it.product(m0) == n:
        return (None,) + tuple(it.idx2crd(r, rest))
    if isinstance(m0, tuple) and len(m0) > 1 and it.product(m0[0]) == n:
        k = it.product(m0[1:])
        inner = tuple(m0[1:])
        c0 = it.idx2crd(r % k, inner)
        return ((None,) + tuple(c0),) + tuple(it.idx2crd(r // k, rest))
    return None


def _check_vector_alignment(t: Any, atom: Any, src: Any, dst: Any) -> None:
    """A universal copy atom of n bits (num_bits_per_copy) moves n bits per call: each call's first
    element must be n-bit aligned as far as the trace knows (the tensor's pointer alignment and the
    call's offset), as CuTe DSL requires; a copy it cannot prove aligned is refused."""
    vt = getattr(atom, "value_type", None)
    bits = getattr(atom, "num_bits_per_copy", None) or 0
    if vt is None or bits <= vt.width:
        return
    n = bits // vt.width
    need = bits // 8
    for side, name, x in (("S", "source", src), ("D", "destination", dst)):
        eng = getattr(x, "engine", None)
        if not hasattr(eng, "alignment") or getattr(x, "element_type", None) is None:
            continue
        offs = _static_offsets(x.layout, "cute.copy")
        for k in range(0, len(offs), n):
            al = eng.alignment(x.offset + int(offs[k]) if int(offs[k]) else x.offset)
            if al < need:
                raise TraceError(
                    f"kernel {t.name}: cute.copy at {user_line()}: a {bits}-bit copy of {vt} needs {need}-byte "
                    f"aligned addresses, but call {k // n} of the {name} {x} is known to be only {al}-byte aligned "
                    f"({side} ptr alignment ({al * 8} bits) does not meet requirement ({bits} bits) of atom); give "
                    f"from_dlpack a larger assumed_align, mark the layout's divisibility, or use a narrower atom"
                )


def make_copy(host: Optional[Callable]) -> Callable:
    """cute.copy: the kernel copy while tracing, else the host copy."""

    def copy(atom: Any, src: Any, dst: Any, *, pred: Optional[Any] = None, **kwargs: Any) -> None:
        if tracing():
            return kernel_copy(atom, src, dst, pred=pred, **kwargs)
        if host is None:
            raise TraceError("cute.copy outside a kernel needs cutelab.nvgpu's host copy, which is not available")
        return host(atom, src, dst, pred=pred, **kwargs)

    copy.__doc__ = (host.__doc__ if host is not None else "") or kernel_copy.__doc__
    copy.__name__ = "copy"
    return copy
