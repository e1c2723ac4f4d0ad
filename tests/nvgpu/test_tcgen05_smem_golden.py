"""SM100 shared-memory layout atoms (tcgen05.make_smem_layout_atom, tile_to_mma_shape) against CuTe DSL
4.8.1 with CUTE_DSL_ARCH=sm_100a (golden vectors from scripts/make_golden_tcgen05.py).
"""

from cutelab.nvgpu import tcgen05

from .tcgen05_golden_common import answer as _try, as_tuple as _tup, dtype as _dt, load_cases as _load


SMEM = _load("tcgen05_smem.json")


def test_golden_smem_cover_every_kind():
    assert len(SMEM) >= 400 and not [c for c in SMEM if "crash" in c]
    assert {c["case"]["kind"] for c in SMEM if "layout" in c} == {k.name for k in tcgen05.SmemLayoutAtomKind}


def test_smem_atoms_and_tile_to_mma_shape_match_dsl():
    bad = []
    for c in SMEM:
        case = c["case"]
        kind = tcgen05.SmemLayoutAtomKind[case["kind"]]
        got = _try(lambda: tcgen05.make_smem_layout_atom(kind, _dt(case["dt"])))
        if case["what"] == "atom":
            got = got if isinstance(got, dict) else {"atom": str(got)}
        elif not isinstance(got, dict):
            order = tuple(case["order"]) if case["order"] is not None else None
            got = _try(lambda: {"layout": str(tcgen05.tile_to_mma_shape(got, _tup(case["mma"]), order))})
        want = {k: v for k, v in c.items() if k != "case"}
        if not (got == want or ("error" in want and "error" in got)):
            bad.append((case, got, want))
    assert not bad, f"{len(bad)} mismatches, first: {bad[:3]}"
