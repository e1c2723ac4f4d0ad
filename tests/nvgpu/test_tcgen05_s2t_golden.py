"""The shared -> tensor memory copies (tcgen05.cp: Cp128x256bOp ... Cp2x64x128b0123Op), make_s2t_copy and
get_s2t_smem_desc_tensor, against CuTe DSL 4.8.1 with CUTE_DSL_ARCH=sm_100a (golden vectors from
scripts/make_golden_tcgen05.py --only s2t): the copy atoms, and the scale-factor flow of the block-scaled
GEMMs (filter_zeros of the SF tensors, the tiled S2T copy, one CTA's partitions, the descriptors' layout).
"""

import json
import os

import pytest

import cutelab as cute
from cutelab import numeric
from cutelab.errors import LayoutError, TensorError
from cutelab.layout import slice_
from cutelab.nvgpu import OperandMajorMode, tcgen05
from cutelab.utils import blackwell_helpers as bh
from cutelab.utils import blockscaled_layout as bl

with open(os.path.join(os.path.dirname(__file__), "..", "golden", "tcgen05_s2t.json")) as f:
    CASES = json.load(f)["cases"]

_ERRS = (LayoutError, TensorError, ValueError, TypeError)


def _try(f):
    try:
        return f()
    except _ERRS as e:
        return {"error": f"{type(e).__name__}: {e}"}


def _op(case):
    cta = {1: tcgen05.CtaGroup.ONE, 2: tcgen05.CtaGroup.TWO}.get(case["cta"], case["cta"])
    return getattr(tcgen05, case["op"])(cta)


def _atom(case):
    op = _op(case)
    return {"op": str(op), "atom": str(cute.make_copy_atom(op, getattr(numeric, case["dt"])))}


def _flow(case):
    a, b, sf = (getattr(numeric, x) for x in case["dt"])
    cta = tcgen05.CtaGroup(case["cta"])
    t = bh.make_blockscaled_trivial_tiled_mma(a, b, OperandMajorMode.K, OperandMajorMode.K, sf, case["vec"], cta,
                                              tuple(case["mn"]))
    tiler = tuple(case["tiler"])
    out = {"tiled_mma": str(t)}
    acc = t.make_fragment_C(t.partition_shape_C(tiler[:2]))
    out["acc_off"] = tcgen05.find_tmem_tensor_col_offset(acc)
    atom = cute.make_copy_atom(_op(case), sf)
    for w, mk, tm in (("a", bl.make_smem_layout_sfa, bl.make_tmem_layout_sfa),
                      ("b", bl.make_smem_layout_sfb, bl.make_tmem_layout_sfb)):
        staged = mk(t, tiler, case["vec"], case["stages"])
        s_t = cute.make_tensor(cute.make_ptr(sf, 0, cute.AddressSpace.smem, assumed_align=128), staged)
        t_t = cute.make_tensor(tcgen05.TmemEngine(sf), tm(t, tiler, case["vec"], slice_(staged, (None, None, None, 0))))
        d = {"tmem": str(t_t.layout), "col_off": _try(lambda: tcgen05.find_tmem_tensor_col_offset(t_t)),
             "kblock": _try(lambda: str(t_t[(None, None, 0)].layout))}

        def flow():
            sc, tc = cute.filter_zeros(s_t), cute.filter_zeros(t_t)
            r = {"sc": str(sc.layout), "tc": str(tc.layout),
                 "bcast": _try(lambda: str(tcgen05.append_s2t_broadcast_mode(atom.op, sc).layout))}
            tcp = tcgen05.make_s2t_copy(atom, tc)
            r["tiled"] = str(tcp)
            thr = tcp.get_slice(0)
            ps = thr.partition_S(sc)
            r["ps"] = str(ps.layout)
            r["desc"] = _try(lambda: str(tcgen05.get_s2t_smem_desc_tensor(tcp, ps).layout))
            r["pd"] = _try(lambda: str(thr.partition_D(tc).layout))
            return r

        d["flow"] = _try(flow)
        out["sf" + w] = d
    return out


def _same(got, want):
    """Equal, where an error in the DSL's answer is an error in cutelab's (the messages differ)."""
    if isinstance(want, dict) and "error" in want:
        return isinstance(got, dict) and "error" in got
    if isinstance(want, dict):
        return isinstance(got, dict) and set(got) == set(want) and all(_same(got[k], want[k]) for k in want)
    return got == want


def test_golden_s2t_cover_each_op_and_flow():
    assert len(CASES) >= 200 and not [c for c in CASES if "crash" in c]
    ops = {c["case"]["op"] for c in CASES if c["case"]["what"] == "atom" and "error" not in c}
    assert ops == {"Cp128x256bOp", "Cp128x128bOp", "Cp4x256bOp", "Cp4x32x128bOp", "Cp2x64x128b0213Op",
                   "Cp2x64x128b0123Op"}
    flows = [c for c in CASES if c["case"]["what"] == "flow" and "error" not in c and "error" not in c["sfa"]["flow"]]
    assert len(flows) > 80


@pytest.mark.parametrize("what", ["atom", "flow"])
def test_s2t_matches_dsl(what):
    bad, n = [], 0
    for c in CASES:
        case = c["case"]
        if case["what"] != what:
            continue
        n += 1
        got = _try(lambda: (_atom if what == "atom" else _flow)(case))
        want = {k: v for k, v in c.items() if k != "case"}
        if not _same(got, want):
            bad.append((case, got, want))
    assert n and not bad, f"{len(bad)} of {n} differ, first: {bad[:2]}"


def test_s2t_errors_name_the_op():
    atom = cute.make_copy_atom(tcgen05.Cp4x32x128bOp(tcgen05.CtaGroup.ONE), numeric.Float8E4M3FN)
    with pytest.raises(ValueError, match="Cp4x32x128bOp: expects the 'cta_group'"):
        tcgen05.Cp4x32x128bOp(1)
    smem = cute.make_tensor(cute.make_ptr(numeric.Float8E4M3FN, 0, cute.AddressSpace.smem), cute.make_layout((128, 4)))
    with pytest.raises(TensorError, match="make_s2t_copy\\(Cp4x32x128bOp\\): expected a tensor-memory tensor"):
        tcgen05.make_s2t_copy(atom, smem)
    wide = cute.make_tensor(tcgen05.TmemEngine(numeric.Float32), cute.make_layout((128, 4), stride=(65536, 1)))
    with pytest.raises(TensorError, match="8-bit values but the TMEM tensor holds Float32"):
        tcgen05.make_s2t_copy(atom, wide)
    with pytest.raises(TensorError, match="mode 0 must be \\(ATOM_V, 1\\)"):
        tcgen05.get_s2t_smem_desc_tensor(atom, smem)
