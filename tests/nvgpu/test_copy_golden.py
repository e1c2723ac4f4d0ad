"""Differential tests against CuTe DSL 4.8.1: golden vectors from scripts/make_golden_copy.py.

Atoms: cutelab prints every op and atom as the DSL does, and rejects what the DSL rejects. It
also rejects, on purpose, two kinds of atoms the DSL prints (checked here case by case):
a num_bits_per_copy that is not a whole number of elements, and a warp-collective atom whose
layouts, recast to the element type, no longer have the warp's 32 threads (CuTe C++ rejects those).

TiledCopies: the printout, size, tiled source/destination TV layouts, partition_S/D of random
tensors for random threads (their layouts, and via identity tensors their coordinates),
make_tiled_copy_S/D, retile, and make_tiled_copy_A/B/C/C_atom of SM80 TiledMMAs. cutelab also
rejects tiled copies with too few threads or values for their atom (CuTe C++'s static
assertions; the DSL prints them), checked case by case.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import cutelab as cute
from cutelab import Layout, LayoutError
from cutelab.int_tuple import product
from cutelab.nvgpu import cpasync, warp

GOLDEN = Path(__file__).parent.parent / "golden"
P = Layout.parse


def _load(kind: str) -> list:
    path = GOLDEN / f"copy_{kind}.json"
    if not path.exists():
        pytest.skip(f"{path.name} missing: run scripts/make_golden_copy.py")
    return json.loads(path.read_text())["cases"]


def _op(spec: dict):
    name = spec["name"]
    if hasattr(warp, name):
        return getattr(warp, name)(*spec["args"])
    if name == "CopyG2SOp":
        return cpasync.CopyG2SOp(getattr(cute.nvgpu.LoadCacheMode, spec["cache_mode"])) if "cache_mode" in spec \
            else cpasync.CopyG2SOp()
    return getattr(cute.nvgpu, name)()


def _atom(spec: dict):
    return cute.make_copy_atom(_op(spec["op"]), getattr(cute, spec["dtype"]), **spec["kw"])


def _bits(dtype: str) -> int:
    return 1 if dtype == "Boolean" else getattr(cute, dtype).width


def _threads_of(printed_atom: str) -> list:
    """Thread counts of the Src and Dst TV layouts in a printed atom."""
    out = []
    for line in printed_atom.splitlines()[2:4]:
        out.append(P(line.split(":", 1)[1].strip()).shape[0])
    return [product(s) for s in out]


def _deliberate_refusal(case: dict, err: Exception) -> bool:
    """The DSL printed an atom that cutelab rejects on purpose (see the module docstring)."""
    a = case["args"]
    n = a["kw"].get("num_bits_per_copy", 0)
    if n and n % _bits(a["dtype"]) == 0 and "whole number" in str(err):
        return False
    if n and n % _bits(a["dtype"]):
        return "whole number" in str(err)
    if hasattr(warp, a["op"]["name"]):
        return "threads, not the 32" in str(err) and _threads_of(case["result"]["atom"]) != [32, 32]
    return False


def test_atoms():
    cases = _load("atoms")
    bad, refused = [], 0
    for case in cases:
        a = case["args"]
        desc = f"{a['op']} {a['dtype']} {a['kw']}"
        try:
            op = _op(a["op"])
            atom = cute.make_copy_atom(op, getattr(cute, a["dtype"]), **a["kw"])
        except (ValueError, TypeError) as e:
            if "result" in case:
                if _deliberate_refusal(case, e):
                    refused += 1
                else:
                    bad.append(f"{desc}: the DSL gives an atom, cutelab raised {e}")
            continue
        if "error" in case:
            bad.append(f"{desc}: the DSL rejects it ({case['error']}), cutelab gives an atom")
            continue
        r = case["result"]
        if str(op) != r["op"]:
            bad.append(f"{desc}: op prints {str(op)!r}, the DSL {r['op']!r}")
        if str(atom) != r["atom"]:
            bad.append(f"{desc}: atom prints\n{atom}\nthe DSL\n{r['atom']}")
        if not a["dtype"].startswith("Uint") and str(atom.value_type) != str(getattr(cute, r["value_type"])):
            bad.append(f"{desc}: value_type {atom.value_type}, the DSL {r['value_type']}")
    assert not bad, f"{len(bad)} of {len(cases)} atom cases differ:\n" + "\n".join(bad[:20])
    assert refused < len(cases) // 4  # the deliberate refusals stay the exception


def _coord(printed_tensor: str):
    """The coordinate offset of a printed identity tensor: 'tensor<(12,0) o ...>' -> (12, 0)."""
    m = re.match(r"tensor<\(?([-0-9,]*)\)? o ", printed_tensor)
    return tuple(int(x) for x in m.group(1).split(","))


def _same_identity_partition(got: str, want: str) -> bool:
    """Equal layouts and coordinates; cutelab prints a coordinate without its trailing zero modes
    ('0', '(24)') where the DSL prints all of them ('(0,0)', '(24,0)'), so pad before comparing."""
    g, w = _coord(got), _coord(want)
    g = g + (0,) * (len(w) - len(g))
    return g == w and got.split(" o ", 1)[1] == want.split(" o ", 1)[1]


def _tiled_checks(tc, r: dict, where: str, bad: list) -> None:
    for name, got, want in (("str", str(tc), r["str"]), ("size", tc.size, r["size"]),
                            ("tiler_mn", str(tc.tiler_mn), r.get("tiler", str(tc.tiler_mn))),
                            ("layout_tv_tiled", str(tc.layout_tv_tiled), r.get("tv", str(tc.layout_tv_tiled))),
                            ("src_tiled", str(tc.layout_src_tv_tiled), r["src_tiled"]),
                            ("dst_tiled", str(tc.layout_dst_tv_tiled), r["dst_tiled"])):
        if got != want:
            bad.append(f"{where}: {name}: cutelab {got!r}, the DSL {want!r}")


def _too_few(tc_args: tuple, err: Exception) -> bool:
    """cutelab refuses a TiledCopy whose thread/value counts are not multiples of the atom's."""
    atom, n_thr, n_val = tc_args
    ref = atom.layout_ref_tv.shape
    a_thr, a_val = product(ref[0]), product(ref[1])
    if "too few threads" in str(err):
        return n_thr % a_thr != 0
    if "too few values" in str(err):
        return n_val % a_val != 0
    return False


def _make_tiled(a: dict, atom):
    if a["make"] == "tv":
        thr, val = P(a["thr"]), P(a["val"])
        return (lambda: cute.make_tiled_copy_tv(atom, thr, val)), thr.size(), val.size()
    if a["make"] == "cotiled":
        tv = P(a["atom_layout_tv"])
        return (lambda: cute.make_cotiled_copy(atom, tv, P(a["data_layout"]))), tv.shape[0], tv.shape[1]
    tv = P(a["layout_tv"])
    return (lambda: cute.make_tiled_copy(atom, tv, tuple(a["tiler"]))), tv.shape[0], tv.shape[1]


def _check_partitions(tc, parts: list, where: str, bad: list, counts: dict) -> None:
    for p in parts:
        if "error" in p:
            continue
        L = P(p["layout"])
        t = cute.make_rmem_tensor(L, cute.Float32)
        ident = cute.make_identity_tensor(L.shape)
        for r in p["per_tid"]:
            th = tc.get_slice(r["tid"])
            w = f"{where} tensor {p['layout']} thread {r['tid']}"
            for key, part, tensor in (("S", th.partition_S, t), ("D", th.partition_D, t),
                                      ("S_id", th.partition_S, ident), ("D_id", th.partition_D, ident)):
                want = r[key]
                try:
                    got = part(tensor)
                except LayoutError as e:
                    if "result" in want:
                        bad.append(f"{w}: {key}: the DSL gives {want['result']}, cutelab raised {e}")
                    continue
                s = str(got) if key.endswith("_id") else str(got.layout)
                if "error" in want:
                    bad.append(f"{w}: {key}: the DSL rejects it ({want['error']}), cutelab gives {s}")
                elif s != want["result"] and not (key.endswith("_id") and _same_identity_partition(s, want["result"])):
                    bad.append(f"{w}: {key}: cutelab {s}, the DSL {want['result']}")
                elif key in ("S", "D"):
                    # the thread's first element: its offset is the layout at the DSL's coordinate
                    crd = _coord(r[key + "_id"]["result"]) if "result" in r[key + "_id"] else None
                    if crd is not None and L(crd) != got.offset:
                        bad.append(f"{w}: {key}: offset {got.offset}, the DSL's coordinate {crd} is offset {L(crd)}")
                    counts["partitions"] += 1
            if "retile" in r and "result" in r["retile"]:
                frag, want = r["retile"]["result"]
                got = str(tc.retile(P(frag)))
                counts["retile"] += 1
                if got != want:
                    bad.append(f"{w}: retile({frag}): cutelab {got}, the DSL {want}")


def test_tiled_copies():
    cases = _load("tiled")
    bad, counts = [], {"partitions": 0, "retile": 0, "refused": 0, "tiled": 0}
    for i, case in enumerate(cases):
        a = case["args"]
        where = f"case {i} ({a['atom']['op']} {a['atom']['dtype']} {a.get('thr', a.get('layout_tv'))} {a.get('val', a.get('tiler'))})"
        atom = _atom(a["atom"])
        make, n_thr, n_val = _make_tiled(a, atom)
        try:
            tc = make()
        except LayoutError as e:
            if "result" in case and _too_few((atom, n_thr, n_val), e):
                counts["refused"] += 1
            elif "result" in case:
                bad.append(f"{where}: the DSL gives a TiledCopy, cutelab raised {e}")
            continue
        if "error" in case:
            bad.append(f"{where}: the DSL rejects it ({case['error']})")
            continue
        r = case["result"]
        counts["tiled"] += 1
        _tiled_checks(tc, r, where, bad)
        if "from" in r and "result" in r["from"]:
            f = cute.make_tiled_copy_S if a["make_from"] == "S" else cute.make_tiled_copy_D
            _tiled_checks(f(atom, tc), r["from"]["result"], where + f" make_tiled_copy_{a['make_from']}", bad)
        _check_partitions(tc, r["partitions"], where, bad, counts)
    assert not bad, f"{len(bad)} differences from CuTe DSL:\n" + "\n".join(bad[:20])
    assert counts["tiled"] > 0.8 * len(cases) and counts["partitions"] > 1000 and counts["retile"] > 500, counts


def test_tiled_copy_properties_on_golden_inputs():
    """make_tiled_copy_tv's layout_tv is a bijection onto the tile; the tiled source and
    destination layouts reach exactly the tile indices layout_tv reaches."""
    n = 0
    for case in _load("tiled"):
        a = case["args"]
        if a["make"] != "tv":
            continue
        try:
            tc = cute.make_tiled_copy_tv(_atom(a["atom"]), P(a["thr"]), P(a["val"]))
        except LayoutError:
            continue
        size = int(np.prod([t.size() for t in tc.tiler_mn]))
        offs = tc.layout_tv_tiled.offsets()
        assert np.array_equal(np.sort(offs), np.arange(size))
        for tv in (tc.layout_src_tv_tiled, tc.layout_dst_tv_tiled):
            assert set(tv.offsets().tolist()) == set(range(size))
            assert product(tv.shape[0]) == tc.size  # same threads; values per thread may differ (ldmatrix rows)
        n += 1
    assert n > 100


class _GoldenTiledMma:
    """A stand-in TiledMma holding what the DSL printed: the tiled TV layouts and the tile sizes."""

    def __init__(self, r: dict):
        self.tv_layout_A_tiled, self.tv_layout_B_tiled, self.tv_layout_C_tiled = (P(r[k]) for k in ("tv_A", "tv_B", "tv_C"))
        self._tile = r["tile"]

    def get_tile_size(self, i: int) -> int:
        return self._tile[i]


def test_tiled_copies_of_tiled_mmas():
    bad, n, n_retile = [], 0, [0]
    makers = {"A": cute.make_tiled_copy_A, "B": cute.make_tiled_copy_B, "C": cute.make_tiled_copy_C,
              "C_atom": cute.make_tiled_copy_C_atom}
    for case in _load("mma"):
        if "result" not in case:
            continue
        mma = _GoldenTiledMma(case["result"])
        for ent in case["result"]["copies"]:
            if "error" in ent:
                continue
            atom = _atom(ent["atom"])
            for which, f in makers.items():
                want = ent[which]
                where = f"{case['args']['mma']} {ent['atom']} {which}"
                try:
                    tc = f(atom, mma)
                except (LayoutError, ValueError) as e:
                    if "result" in want and not _too_few((atom, product(getattr(mma, f"tv_layout_{which[0]}_tiled").shape[0]),
                                                           product(getattr(mma, f"tv_layout_{which[0]}_tiled").shape[1])), e):
                        bad.append(f"{where}: the DSL gives a TiledCopy, cutelab raised {e}")
                    continue
                if "error" in want:
                    bad.append(f"{where}: the DSL rejects it ({want['error']})")
                    continue
                r = want["result"]
                _tiled_checks(tc, r, where, bad)
                p = r["part"]
                t = cute.make_rmem_tensor(P(p["layout"]), cute.Float32)
                th = tc.get_slice(p["tid"])
                for key, part in (("S", th.partition_S), ("D", th.partition_D)):
                    if "result" in p[key] and str(part(t).layout) != p[key]["result"]:
                        bad.append(f"{where}: partition_{key}: cutelab {part(t).layout}, the DSL {p[key]['result']}")
                if "result" in r.get("retile", {}):
                    frag, want = r["retile"]["result"]
                    if str(tc.retile(P(frag))) != want:
                        bad.append(f"{where}: retile({frag}): cutelab {tc.retile(P(frag))}, the DSL {want}")
                    n_retile[0] += 1
                n += 1
    assert not bad, f"{len(bad)} differences from CuTe DSL:\n" + "\n".join(bad[:20])
    assert n >= 150 and n_retile[0] >= 150


def _cutelab_tiled_mma(m: dict):
    from cutelab.nvgpu import MmaUniversalOp

    if m["op"] == "MmaUniversalOp":
        op = MmaUniversalOp(getattr(cute, m["ab"]))
    elif m["op"] == "MmaTF32Op":
        op = warp.MmaTF32Op(tuple(m["shape"]))
    else:
        op = getattr(warp, m["op"])(getattr(cute, m["ab"]), getattr(cute, m["acc"]), tuple(m["shape"]))
    perm = tuple(m["perm"]) if m["perm"] else None
    return cute.make_tiled_mma(op, tuple(m["atoms"]), permutation_mnk=perm)


def test_tiled_copies_of_cutelab_tiled_mmas():
    """make_tiled_copy_A/B/C/C_atom on cutelab's own TiledMma give what the DSL gives."""
    n = 0
    makers = {"A": cute.make_tiled_copy_A, "B": cute.make_tiled_copy_B, "C": cute.make_tiled_copy_C,
              "C_atom": cute.make_tiled_copy_C_atom}
    for case in _load("mma"):
        tm = _cutelab_tiled_mma(case["args"]["mma"])
        r = case["result"]
        assert [str(tm.tv_layout_A_tiled), str(tm.tv_layout_B_tiled), str(tm.tv_layout_C_tiled)] == \
            [r["tv_A"], r["tv_B"], r["tv_C"]]
        for ent in r["copies"]:
            atom = _atom(ent["atom"])
            for which, f in makers.items():
                if "result" in ent[which]:
                    tv = getattr(tm, f"tv_layout_{which[0]}_tiled")
                    try:
                        tc = f(atom, tm)
                    except LayoutError as e:  # CuTe C++'s static assertion, which the DSL skips
                        assert _too_few((atom, product(tv.shape[0]), product(tv.shape[1])), e), e
                        continue
                    assert str(tc) == ent[which]["result"]["str"]
                    n += 1
                else:
                    with pytest.raises(ValueError):
                        f(atom, tm)
    assert n >= 150
