"""Colour palettes for pictures, chosen by measured contrast and distinctness.

``categorical(n)`` gives n distinct colours for n threads (or tiles, or repeats). The first
eight are Paul Tol's "light" scheme (designed to stay distinguishable for the common forms of
colour blindness); each further colour is the candidate (from a 15-level sRGB grid, minus
near-white and near-black, which holes and grid lines use) farthest in CIEDE2000 from all
colours chosen so far (greedy farthest-point selection), so colours are as distinct as the
gamut allows and categorical(n) is a prefix of categorical(n + 1). Past the grid's 3150 colours
the sequence repeats, so categorical(n) finishes for any n.

Labels are drawn in ``ink(fill)``: black or white, whichever has the higher WCAG 2 contrast on
that fill. The better of the two is at least 4.58:1 on any colour, so every label meets the
WCAG AA 4.5:1 contrast for normal text (tests/render/test_palette.py checks both properties).

``shade(k)`` is CuTe print_latex's eight grey levels (a cell's offset mod 8), spread evenly in
CIE lightness L* (from 97 down to 26) so that neighbouring levels differ visibly; ``heat(n)`` is
a sequential ramp for big pictures.

>>> categorical(3)
['#77AADD', '#EE8866', '#44BB99']
>>> len(set(categorical(300)))
300
>>> ink("#77AADD"), ink("#222266")
('#000000', '#FFFFFF')
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any

import numpy as np

from ..limits import check_time

__all__ = ["TOL_LIGHT", "HOLE", "categorical", "max_distinct", "shade", "heat", "ansi256", "hex_to_rgb", "ink", "contrast",
           "delta_e2000", "to_lab", "xterm_hex", "luminance"]

# Paul Tol's "light" qualitative scheme, reordered so that the first few are far apart.
TOL_LIGHT = ["#77AADD", "#EE8866", "#44BB99", "#EEDD88", "#FFAABB", "#99DDFF", "#BBCC33", "#AAAA00"]

#: fill of a cell that no one owns / that no coordinate maps to
HOLE = "#FFFFFF"

# CuTe's print_latex greys (black!00, 40, 20, 60, 10, 50, 30, 70): the order of the 8 levels.
_GREYS = [0, 40, 20, 60, 10, 50, 30, 70]


def hex_to_rgb(h: str) -> tuple[int, int, int]:
    return int(h[1:3], 16), int(h[3:5], 16), int(h[5:7], 16)


def _rgb_to_hex(r: int, g: int, b: int) -> str:
    return f"#{r:02X}{g:02X}{b:02X}"


# --------------------------------------------------------------------------- colour science

def _linear(rgb: np.ndarray) -> np.ndarray:
    """sRGB in [0, 255] to linear light in [0, 1] (IEC 61966-2-1)."""
    c = np.asarray(rgb, dtype=np.float64) / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def luminance(rgb: Any) -> np.ndarray:
    """WCAG 2 relative luminance of sRGB colours (..., 3) in [0, 255]."""
    lin = _linear(rgb)
    return lin[..., 0] * 0.2126 + lin[..., 1] * 0.7152 + lin[..., 2] * 0.0722


def contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio of two hex colours (1 to 21)."""
    la, lb = float(luminance(hex_to_rgb(a))), float(luminance(hex_to_rgb(b)))
    hi, lo = max(la, lb), min(la, lb)
    return (hi + 0.05) / (lo + 0.05)


@lru_cache(maxsize=4096)
def ink(fill: str) -> str:
    """The label colour for a fill: black or white, whichever contrasts more (WCAG 2)."""
    return "#000000" if contrast(fill, "#000000") >= contrast(fill, "#FFFFFF") else "#FFFFFF"


def to_lab(rgb: Any) -> np.ndarray:
    """CIE L*a*b* (D65) of sRGB colours (..., 3) in [0, 255]."""
    lin = _linear(rgb)
    m = np.array([[0.4124564, 0.3575761, 0.1804375],
                  [0.2126729, 0.7151522, 0.0721750],
                  [0.0193339, 0.1191920, 0.9503041]])
    xyz = lin @ m.T / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.stack([116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])], axis=-1)


def delta_e2000(lab1: np.ndarray, lab2: np.ndarray) -> np.ndarray:
    """CIEDE2000 colour difference of L*a*b* colours (broadcasting; Sharma, Wu, Dalal 2005)."""
    L1, a1, b1 = lab1[..., 0], lab1[..., 1], lab1[..., 2]
    L2, a2, b2 = lab2[..., 0], lab2[..., 1], lab2[..., 2]
    C1, C2 = np.hypot(a1, b1), np.hypot(a2, b2)
    Cm = (C1 + C2) / 2
    G = 0.5 * (1 - np.sqrt(Cm ** 7 / (Cm ** 7 + 25.0 ** 7)))
    a1p, a2p = (1 + G) * a1, (1 + G) * a2
    C1p, C2p = np.hypot(a1p, b1), np.hypot(a2p, b2)
    h1p = np.degrees(np.arctan2(b1, a1p)) % 360
    h2p = np.degrees(np.arctan2(b2, a2p)) % 360
    dLp = L2 - L1
    dCp = C2p - C1p
    dh = h2p - h1p
    dh = np.where(dh > 180, dh - 360, np.where(dh < -180, dh + 360, dh))
    dh = np.where(C1p * C2p == 0, 0.0, dh)
    dHp = 2 * np.sqrt(C1p * C2p) * np.sin(np.radians(dh / 2))
    Lmp = (L1 + L2) / 2
    Cmp = (C1p + C2p) / 2
    hsum = h1p + h2p
    hmp = np.where(C1p * C2p == 0, hsum,
                   np.where(np.abs(h1p - h2p) <= 180, hsum / 2, np.where(hsum < 360, (hsum + 360) / 2, (hsum - 360) / 2)))
    T = (1 - 0.17 * np.cos(np.radians(hmp - 30)) + 0.24 * np.cos(np.radians(2 * hmp))
         + 0.32 * np.cos(np.radians(3 * hmp + 6)) - 0.20 * np.cos(np.radians(4 * hmp - 63)))
    dtheta = 30 * np.exp(-(((hmp - 275) / 25) ** 2))
    Rc = 2 * np.sqrt(Cmp ** 7 / (Cmp ** 7 + 25.0 ** 7))
    Sl = 1 + 0.015 * (Lmp - 50) ** 2 / np.sqrt(20 + (Lmp - 50) ** 2)
    Sc = 1 + 0.045 * Cmp
    Sh = 1 + 0.015 * Cmp * T
    Rt = -np.sin(np.radians(2 * dtheta)) * Rc
    return np.sqrt((dLp / Sl) ** 2 + (dCp / Sc) ** 2 + (dHp / Sh) ** 2 + Rt * (dCp / Sc) * (dHp / Sh))


# --------------------------------------------------------------------------- palettes

@lru_cache(maxsize=1)
def _candidates() -> tuple[np.ndarray, np.ndarray]:
    """A 15-level sRGB grid (3375 colours) without near-white and near-black: (rgb, lab)."""
    levels = np.round(np.linspace(0, 255, 15)).astype(np.int64)
    rgb = np.stack(np.meshgrid(levels, levels, levels, indexing="ij"), axis=-1).reshape(-1, 3)
    lab = to_lab(rgb)
    keep = (lab[:, 0] > 22) & (lab[:, 0] < 94)  # leave white to holes and black to lines and borders
    return rgb[keep], lab[keep]


def max_distinct() -> int:
    """How many distinct colours categorical gives before it repeats (Tol's 8 plus the grid's)."""
    return len(TOL_LIGHT) + len(_candidates()[0])


class _Greedy:
    """The greedy farthest-point sequence, extended on demand and kept (thread-safe)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.hexes: list[str] = []
        self.dmin: np.ndarray | None = None

    def prefix(self, n: int) -> list[str]:
        with self.lock:
            if self.dmin is None:
                rgb, lab = _candidates()
                self.dmin = np.full(len(rgb), np.inf)
                for c in TOL_LIGHT:
                    self.hexes.append(c)
                    self.dmin = np.minimum(self.dmin, delta_e2000(lab, to_lab(np.array(hex_to_rgb(c)))))
            rgb, lab = _candidates()
            while len(self.hexes) < n:
                check_time("categorical colours")  # a request's deadline, if any (the work done is kept)
                j = int(np.argmax(self.dmin))  # ties: the first candidate, so the sequence is deterministic
                if self.dmin[j] <= 0:  # every candidate chosen: the sequence is complete
                    break
                self.hexes.append(_rgb_to_hex(*(int(v) for v in rgb[j])))
                self.dmin = np.minimum(self.dmin, delta_e2000(lab, lab[j]))
                self.dmin[j] = 0.0
            return self.hexes[:n]


_GREEDY = _Greedy()


def categorical(n: int) -> list[str]:
    """n colours (hex strings): Tol's light scheme, then greedy CIEDE2000-farthest colours.

    The first ``max_distinct()`` (3150) colours are distinct; past that the sequence repeats
    (colour i is colour i mod max_distinct()), so any n finishes in time linear in n. A picture
    with thousands of categories is read by its labels and hover, not by colour.
    """
    n = int(n)
    if n <= 0:
        return []
    base = _GREEDY.prefix(min(n, max_distinct()))
    if n <= len(base):
        return list(base)
    k = len(base)
    return [base[i % k] for i in range(n)]


def shade(k: int) -> str:
    """CuTe print_latex's grey for key k (k mod 8): 8 greys evenly spaced in L* from 97 to 26."""
    rank = _GREYS[k % 8] // 10  # 0 (lightest) .. 7 (darkest), in CuTe's order of keys
    L = 97 - rank * (97 - 26) / 7
    y = ((L + 16) / 116) ** 3 if L > 8 else L / 903.3  # L* -> relative luminance
    v = 12.92 * y if y <= 0.0031308 else 1.055 * y ** (1 / 2.4) - 0.055
    g = int(round(255 * v))
    return _rgb_to_hex(g, g, g)


# Tol's "YlOrBr"-like sequential ramp endpoints (light to dark), readable without labels.
_HEAT = ["#FFFFE5", "#FFF7BC", "#FEE391", "#FEC44F", "#FB9A29", "#EC7014", "#CC4C02", "#993404", "#662506"]


def heat(n: int) -> list[str]:
    """n colours of a sequential ramp from light yellow to dark brown (for offset heat maps)."""
    if n <= 1:
        return [_HEAT[0]]
    out = []
    for i in range(n):
        x = i / (n - 1) * (len(_HEAT) - 1)
        j = min(int(x), len(_HEAT) - 2)
        f = x - j
        a, b = hex_to_rgb(_HEAT[j]), hex_to_rgb(_HEAT[j + 1])
        out.append(_rgb_to_hex(*(round(a[t] + (b[t] - a[t]) * f) for t in range(3))))
    return out


def _xterm_colours() -> list[tuple[int, int, int]]:
    steps = [0, 95, 135, 175, 215, 255]
    cube = [(steps[r], steps[g], steps[b]) for r in range(6) for g in range(6) for b in range(6)]
    greys = [(8 + 10 * i,) * 3 for i in range(24)]
    return cube + greys


_XTERM = _xterm_colours()


@lru_cache(maxsize=4096)
def ansi256(hex_colour: str) -> int:
    """The xterm-256 colour index (16..255) nearest to a hex colour."""
    r, g, b = hex_to_rgb(hex_colour)
    best = min(range(len(_XTERM)), key=lambda i: (_XTERM[i][0] - r) ** 2 + (_XTERM[i][1] - g) ** 2 + (_XTERM[i][2] - b) ** 2)
    return 16 + best


def xterm_hex(index: int) -> str:
    """The hex colour of xterm-256 colour index 16..255."""
    return _rgb_to_hex(*_XTERM[index - 16])
