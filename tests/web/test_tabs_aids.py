"""Presets, the suggest-a-swizzle tab and the TiledCopy-by-destination tab, without a browser."""

from __future__ import annotations

import pytest

import cutelab as cute
from cutelab import analysis as A
from cutelab.errors import LayoutError
from cutelab.web import TABS, compute, tabs_json
from cutelab.web import tabs as T
from cutelab.web.server import figure_json

PRESETS = [(t.id, name, values) for t in TABS.values() for name, values in t.presets]


def test_every_tab_has_presets_and_the_page_gets_them_whole():
    decl = {t["id"]: t for t in tabs_json()}
    for tab_id, t in TABS.items():
        assert t.presets, tab_id
        names = [p["name"] for p in decl[tab_id]["presets"]]
        assert names == [n for n, _ in t.presets] and len(set(names)) == len(names)
        for p, (_, given) in zip(decl[tab_id]["presets"], t.presets):
            assert set(p["values"]) == {f.name for f in t.fields}  # every field: the preset's value or its default
            assert all(p["values"][k] == v for k, v in given.items())


@pytest.mark.parametrize("tab_id, name, values", PRESETS, ids=[f"{a}:{b}" for a, b, _ in PRESETS])
def test_every_preset_draws(tab_id, name, values):
    fig = compute(tab_id, values)
    assert fig.grids
    # and it is a different picture than the tab's default unless it is the default (its values are {})
    if values:
        assert T.TABS[tab_id].values(values) != T.TABS[tab_id].values({})


def test_a_preset_naming_an_unknown_field_is_refused_at_declaration():
    with pytest.raises(ValueError, match="unknown fields"):
        T.tab("x_test", "x", T.Field("a", "a", "1"), presets=(("bad", {"b": "2"}),))
    assert "x_test" not in TABS


def test_copy_dst_presets_are_the_mmas_register_layouts():
    mma = cute.make_tiled_mma(cute.nvgpu.warp.MmaF16BF16Op(cute.Float16, cute.Float32, (16, 8, 16)))
    for text, tv in ((T._MMA_A, mma.tv_layout_A_tiled), (T._MMA_B, mma.tv_layout_B_tiled),
                     (T._MMA_C, mma.tv_layout_C_tiled)):
        L = cute.Layout.parse(text)
        assert L.size() == tv.size() and (L.offsets() == tv.offsets()).all(), text


def test_copy_dst_tab_is_make_tiled_copy_with_the_given_destination():
    fig = compute("copy_dst", {})
    atom = cute.make_copy_atom(cute.nvgpu.warp.LdMatrix8x8x16bOp(False, 4), cute.Float16)
    tc = cute.make_tiled_copy(atom, cute.Layout.parse(T._MMA_A), (16, 16))
    src = A.tv_offsets(tc.layout_src_tv_tiled, "(256):(1)")
    g = fig.grids[0]
    for t in range(src.shape[0]):
        for v in range(src.shape[1]):
            e = int(src[t, v])
            assert g.labels[e % 16, e // 16] == f"T{t}\nV{v}" or "\n" in str(g.tips[e % 16, e // 16])
    assert "the registers are the given layout" in fig.notes[0]
    fig = compute("copy_dst", {"smem": "(16,16):(16,1)"})
    want = A.analyze(A.copy_trace(tc, "(16,16):(16,1)")).summary()
    assert want in fig.notes[1]
    from cutelab.analysis.suggest import suggest_swizzle

    best = suggest_swizzle("(16,16):(16,1)", tiled_copy=tc).best
    assert f"suggested swizzle: {best.swizzle} (0 conflicts" in fig.notes[1]
    assert A.analyze(A.copy_trace(tc, best.layout)).totals()["conflicts"] == 0


def test_copy_dst_tab_errors_name_their_field():
    status, data = figure_json("copy_dst", {"dst": "((4,8),(2,2,2)):((32,1),(16,8,129))"})
    assert status == 400 and data["field"] == "dst"
    status, data = figure_json("copy_dst", {"tile": "16"})
    assert status == 400 and data["field"] == "tile"
    status, data = figure_json("copy_dst", {"smem": "(16,16):(16,"})
    assert status == 400 and data["field"] == "smem"


def test_suggest_tab_is_suggest_swizzle():
    fig = compute("suggest", {})
    assert fig.title.startswith("suggest a swizzle: S<3,3,3> takes 448 bank conflicts to 0")
    fig = compute("suggest", {"ldmatrix": "", "tv": "(32,1):(48,1)", "layout": "(32,48):(48,1)", "dtype": "f32"})
    assert "none found" in fig.title
    status, data = figure_json("suggest", {"layout": "(512,512):(512,1)"})
    assert status == 400 and data["field"] == "layout" and "searches tiles of up to" in data["error"]
    status, data = figure_json("suggest", {"ldmatrix": "", "tv": "(32,1):(1"})
    assert status == 400 and data["field"] == "tv"
