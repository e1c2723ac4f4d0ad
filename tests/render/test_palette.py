"""Palettes: every label meets WCAG AA contrast on its fill; colours are distinct by CIEDE2000."""

import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from cutelab import render as R
from cutelab.render import palette as P


def _lab(colours):
    return P.to_lab(np.array([P.hex_to_rgb(c) for c in colours]))


def _min_de(colours):
    lab = _lab(colours)
    d = P.delta_e2000(lab[:, None], lab[None, :])
    return d[np.triu_indices(len(colours), 1)]


def test_ciede2000_matches_sharma_test_data():
    # Sharma, Wu, Dalal (2005), table 1: pairs 1, 7, 17, 25
    pairs = [((50, 2.6772, -79.7751), (50, 0, -82.7485), 2.0425),
             ((50, 0, 0), (50, -1, 2), 2.3669),
             ((50, 2.5, 0), (73, 25, -18), 27.1492),
             ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644)]
    for a, b, want in pairs:
        assert abs(float(P.delta_e2000(np.array(a, float), np.array(b, float))) - want) < 1e-4


def test_wcag_contrast_reference_values():
    assert abs(P.contrast("#000000", "#FFFFFF") - 21) < 1e-9
    assert abs(P.contrast("#777777", "#FFFFFF") - 4.48) < 0.01


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 255), st.integers(0, 255), st.integers(0, 255))
def test_ink_meets_aa_on_any_fill(r, g, b):
    fill = f"#{r:02X}{g:02X}{b:02X}"
    assert P.contrast(fill, P.ink(fill)) >= 4.5


@pytest.mark.parametrize("n", [1, 8, 40, 64, 128, 256, 300])
def test_categorical_labels_meet_aa(n):
    cols = P.categorical(n)
    assert len(cols) == n == len(set(cols))
    worst = min(P.contrast(c, P.ink(c)) for c in cols)
    assert worst >= 4.5, worst


@pytest.mark.parametrize("n,floor", [(8, 9.0), (32, 9.0), (64, 9.0), (128, 8.5), (256, 7.0)])
def test_categorical_colours_are_distinct(n, floor):
    d = _min_de(P.categorical(n))
    assert d.min() >= floor, (n, d.min())
    assert (d < 5).sum() == 0  # no pair is near the just-noticeable range


def test_categorical_is_a_prefix_and_starts_with_tol():
    assert P.categorical(8) == P.TOL_LIGHT
    assert P.categorical(100)[:70] == P.categorical(70)
    assert P.HOLE not in P.categorical(256)


def test_greys_are_ordered_like_cute_and_distinct():
    greys = [P.shade(k) for k in range(8)]
    lum = [float(P.luminance(P.hex_to_rgb(g))) for g in greys]
    order = sorted(range(8), key=lambda k: -lum[k])
    assert order == sorted(range(8), key=lambda k: P._GREYS[k])  # black!00 lightest ... black!70 darkest
    assert _min_de(greys).min() >= 6.0
    assert all(P.contrast(g, P.ink(g)) >= 4.5 for g in greys)


def test_back_ends_draw_labels_in_the_ink():
    fig = R.layout_figure("(8,8):(1,8)")
    g = fig.grids[0]
    dark = [k for k in range(8) if g.ink(k) == "#FFFFFF"]
    assert dark  # the darker greys carry white labels
    svg = R.render(fig, "svg")
    assert len(re.findall(r'<text [^>]*fill="#fff"', svg)) == 8 * len(dark)
    txt = R.render(fig, "text", color=True)
    assert "\x1b[38;5;231m" in txt and "\x1b[38;5;16m" in txt


def test_categorical_finishes_past_the_grid_and_repeats():
    # it looped forever past about 3,400 colours (issue 23)
    import time

    t0 = time.perf_counter()
    cols = P.categorical(3600)
    assert time.perf_counter() - t0 < 30
    k = P.max_distinct()
    assert len(cols) == 3600 and len(set(cols)) == k == len(set(P.categorical(k)))
    assert cols[k:] == cols[:3600 - k]  # past the distinct colours the sequence repeats
    assert len(P.categorical(200_000)) == 200_000
