"""analyze(AccessTrace): sectors/requests (global) and wavefronts/bank conflicts (shared).

A case table of classic patterns with known answers, a brute-force reference (plain loops, one
lane and one byte at a time) checked against the vectorized counts on random traces, and the
errors for bad traces.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutelab.analysis import AccessTrace, analyze, concat
from cutelab.errors import LayoutError

LANES = np.arange(32)


def shared(addr, nb, op="ld"):
    return analyze(AccessTrace(np.asarray(addr)[None, :] if np.ndim(addr) == 1 else addr, nb, "shared", op))


def glob(addr, nb):
    return analyze(AccessTrace(np.asarray(addr)[None, :], nb, "global"))


# (name, addresses of one instruction, bytes per lane, wavefronts, conflicts)
SHARED_CASES = [
    ("32-bit consecutive", LANES * 4, 4, 1, 0),
    ("32-bit broadcast one word", np.zeros(32, int), 4, 1, 0),
    ("32-bit stride 2 words", LANES * 8, 4, 2, 1),
    ("32-bit stride 32 words (column of 32x32 f32)", LANES * 128, 4, 32, 31),
    ("32-bit stride 33 words (padded column)", LANES * 132, 4, 1, 0),
    ("16-bit consecutive: two lanes per word", LANES * 2, 2, 1, 0),
    ("8-bit consecutive", LANES, 1, 1, 0),
    ("16-bit stride 64 halves", LANES * 128, 2, 32, 31),
    ("64-bit consecutive: two half-warp phases", LANES * 8, 8, 2, 0),
    ("64-bit stride 16 bytes: 2-way in each half", LANES * 16, 8, 4, 2),
    ("128-bit consecutive: four quarter-warp phases", LANES * 16, 16, 4, 0),
    ("128-bit column of 128-byte rows: 8-way per phase", LANES * 128, 16, 32, 28),
    ("128-bit all lanes one address", np.zeros(32, int), 16, 4, 0),
    ("128-bit stride 32 bytes: 2-way per phase", LANES * 32, 16, 8, 4),
]


@pytest.mark.parametrize("name,addr,nb,wf,cf", SHARED_CASES, ids=[c[0] for c in SHARED_CASES])
def test_shared_cases(name, addr, nb, wf, cf):
    r = shared(addr, nb)
    assert int(r.wavefronts[0]) == wf
    assert int(r.conflicts[0]) == cf
    assert r.totals()["conflicts"] == cf


# (name, addresses, bytes per lane, sectors, bytes used)
GLOBAL_CASES = [
    ("32-bit consecutive", LANES * 4, 4, 4, 128),
    ("32-bit consecutive, misaligned by one word", LANES * 4 + 4, 4, 5, 128),
    ("32-bit stride 2 words", LANES * 8, 4, 8, 128),
    ("32-bit stride 32 bytes", LANES * 32, 4, 32, 128),
    ("32-bit broadcast", np.zeros(32, int), 4, 1, 4),
    ("16-bit consecutive", LANES * 2, 2, 2, 64),
    ("128-bit consecutive", LANES * 16, 16, 16, 512),
    ("128-bit stride 32 bytes (seed inner partition)", LANES * 32, 16, 32, 512),
    ("64-bit consecutive", LANES * 8, 8, 8, 256),
]


@pytest.mark.parametrize("name,addr,nb,sectors,used", GLOBAL_CASES, ids=[c[0] for c in GLOBAL_CASES])
def test_global_cases(name, addr, nb, sectors, used):
    r = glob(addr, nb)
    assert int(r.requests[0]) == 1
    assert int(r.sectors[0]) == sectors
    assert int(r.bytes_used[0]) == used
    assert r.efficiency[0] == pytest.approx(used / (32 * sectors))
    assert r.ncu() == {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 1,
                       "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": sectors}


def test_inactive_lanes_and_empty_instructions():
    a = np.full((2, 32), -1)
    a[0, :4] = [0, 128, 256, 384]  # 4 lanes, same bank
    r = analyze(AccessTrace(a, 4, "shared"))
    assert r.wavefronts.tolist() == [4, 0] and r.conflicts.tolist() == [3, 0]
    assert r.requests.tolist() == [1, 0]
    g = analyze(AccessTrace(a, 4, "global"))
    assert g.sectors.tolist() == [4, 0] and g.requests.tolist() == [1, 0]
    assert "no active lane" in g.explain(1)


def test_fewer_lanes_are_padded_inactive():
    t = AccessTrace([[0, 4]], 4, "shared")
    assert t.addresses.shape == (1, 32) and int(t.active.sum()) == 2


def test_ldmatrix_phases_are_matrices():
    # x4 over a row-major 16x16 f16 tile with 32-byte rows: rows 0 and 4 share banks -> 2-way
    rows = np.concatenate([(np.arange(8) + 8 * (j % 2)) * 32 + 16 * (j // 2) for j in range(4)])
    r = shared(rows, 16, "ldsm")
    assert int(r.wavefronts[0]) == 8 and int(r.conflicts[0]) == 4
    x1 = np.full(32, -1)
    x1[:8] = np.arange(8) * 16
    r1 = shared(x1, 16, "ldsm")
    assert int(r1.wavefronts[0]) == 1 and int(r1.conflicts[0]) == 0
    assert "ldmatrix.x1" in r1.explain(0)
    assert set(r.ncu()) == {"sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
                            "sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum"}


def test_explanations_name_the_bank_and_counts():
    r = shared(LANES * 128, 16)
    s = r.explain(0)
    assert s.startswith("warp 0, instruction 0 (128-bit ld.shared, 32 lanes)")
    assert "8 lanes hit bank 0 at 8 different addresses: 8 wavefronts, 7 of them conflicts" in s
    assert "32 wavefronts for 4 phases: 28 conflicts" in s
    assert shared(LANES * 4, 4).explain(0).endswith("1 wavefront, no conflicts")
    g = glob(LANES * 32, 16).explain(0)
    assert "512 bytes used in 32 sectors (1024 bytes fetched)" in g and "50% efficiency" in g
    lines = analyze(AccessTrace(np.tile(LANES * 4, (20, 1)), 4, "shared")).explanation(limit=3)
    assert len(lines) == 5 and lines[-1] == "... 17 more instruction(s)"


def test_phase_detail():
    r = shared(LANES * 8, 8)  # 64-bit: half-warps, banks 2k, 2k+1 once each
    ph = r.phases(0)
    assert [p.lanes for p in ph] == [(0, 15), (16, 31)] and all(p.wavefronts == 1 for p in ph)
    with pytest.raises(LayoutError, match="global"):
        glob(LANES * 4, 4).phases(0)


# --------------------------------------------------------------------------- reference

def reference(addr: np.ndarray, nb: int, space: str, op: str = "ld"):
    """Plain loops, one instruction, phase, lane and byte at a time."""
    out = []
    for row in addr:
        act = [(lane, int(a)) for lane, a in enumerate(row) if a >= 0]
        bytes_ = {a + k for _, a in act for k in range(nb)}
        sectors = {b // 32 for b in bytes_}
        wf = ideal = 0
        if space == "shared":
            pl = 8 if op == "ldsm" else (32 if nb <= 4 else 128 // nb)
            for p in range(32 // pl):
                banks: dict = {}
                any_lane = False
                for lane, a in act:
                    if p * pl <= lane < (p + 1) * pl:
                        any_lane = True
                        for b in range(a, a + nb):
                            banks.setdefault((b // 4) % 32, set()).add(b // 4)
                if any_lane:
                    wf += max(len(s) for s in banks.values())
                    ideal += 1
        out.append((1 if act else 0, len(sectors), len(bytes_), wf, ideal))
    return out


@st.composite
def traces(draw):
    nb = draw(st.sampled_from([1, 2, 4, 8, 16]))
    n = draw(st.integers(1, 3))
    span = draw(st.sampled_from([64, 256, 1024, 8192]))
    a = np.array(draw(st.lists(st.integers(0, span // nb), min_size=32 * n, max_size=32 * n))).reshape(n, 32) * nb
    mask = np.array(draw(st.lists(st.booleans(), min_size=32 * n, max_size=32 * n))).reshape(n, 32)
    if draw(st.booleans()):
        a = np.where(mask, a, -1)
    space = draw(st.sampled_from(["global", "shared"]))
    return a, nb, space


@settings(max_examples=150, deadline=None)
@given(traces())
def test_matches_reference(tr):
    a, nb, space = tr
    r = analyze(AccessTrace(a, nb, space))
    got = list(zip(r.requests.tolist(), r.sectors.tolist(), r.bytes_used.tolist(), r.wavefronts.tolist(),
                   r.ideal_wavefronts.tolist()))
    assert got == reference(a, nb, space)
    # postconditions
    assert (r.sectors * 32 >= r.bytes_used).all()
    assert (r.wavefronts >= r.ideal_wavefronts).all()
    assert ((r.requests == 0) == ~(a >= 0).any(axis=1)).all()
    for i in range(len(a)):
        assert r.explain(i).startswith(f"warp 0, instruction {i} ")


def test_concat():
    t = concat([AccessTrace([LANES * 4], 4, "shared"), AccessTrace([LANES * 128], 4, "shared", warps=[1])])
    r = analyze(t)
    assert r.wavefronts.tolist() == [1, 32] and t.describe(1) == "warp 1, instruction 0"
    with pytest.raises(LayoutError, match="differ"):
        concat([AccessTrace([LANES * 4], 4, "shared"), AccessTrace([LANES * 8], 8, "shared")])


# --------------------------------------------------------------------------- errors

@pytest.mark.parametrize("kw,match", [
    (dict(addresses=[[0]], bytes_per_lane=4, space="local"), "space must be one of global, shared"),
    (dict(addresses=[[0]], bytes_per_lane=4, space="shared", op="atom"), "op must be one of"),
    (dict(addresses=[[0]], bytes_per_lane=3, space="shared"), "bytes per lane must be one of"),
    (dict(addresses=[[2]], bytes_per_lane=4, space="shared"), "lane 0: address 2 is not aligned to the 4-byte"),
    (dict(addresses=[[0, -5]], bytes_per_lane=4, space="global"), "lane 1: negative address -5"),
    (dict(addresses=np.zeros((1, 33), int), bytes_per_lane=4, space="global"), r"lanes <= 32"),
    (dict(addresses=[[0.5]], bytes_per_lane=4, space="global"), "must be integers"),
    (dict(addresses=[[0]], bytes_per_lane=16, space="global", op="ldsm"), "shared memory only"),
    (dict(addresses=[[0]], bytes_per_lane=8, space="shared", op="ldsm"), "16 bytes per lane"),
    (dict(addresses=[list(range(0, 160, 16))], bytes_per_lane=16, space="shared", op="ldsm"), "lanes 0-7, 0-15"),
    (dict(addresses=[[0]], bytes_per_lane=4, space="shared", warps=[0, 1]), "one warp per instruction"),
])
def test_bad_traces_raise(kw, match):
    with pytest.raises(LayoutError, match=match):
        AccessTrace(**kw)


def test_analyze_wants_a_trace():
    with pytest.raises(LayoutError, match="expected an AccessTrace"):
        analyze(np.zeros((1, 32)))


def test_from_threads_splits_a_block_record_into_warps():
    rec = np.arange(2 * 40).reshape(2, 40) * 4  # 2 accesses of 40 threads: warp 1 has 8 threads
    t = AccessTrace.from_threads(rec, 4, "shared")
    assert t.num_instructions == 4
    assert t.warps.tolist() == [0, 0, 1, 1] and t.index.tolist() == [0, 1, 0, 1]
    assert (t.addresses[1, :32] == rec[1, :32]).all()
    assert (t.addresses[2, :8] == rec[0, 32:]).all() and (t.addresses[2, 8:] == -1).all()
    with pytest.raises(LayoutError, match="accesses, threads"):
        AccessTrace.from_threads(np.zeros(4, int), 4, "shared")
