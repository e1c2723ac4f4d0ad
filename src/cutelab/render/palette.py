"""Colour palettes for pictures: colour-blind friendly, distinct, and legible under black text.

``categorical(n)`` gives n *distinct* colours for n threads (or tiles, or repeats). The first
eight are Paul Tol's "light" scheme (designed to stay distinguishable for the common forms of
colour blindness, and light enough to carry black labels); beyond eight the hues cycle and each
cycle gets its own lightness, interleaved so that neighbouring cycles differ strongly. Every
colour returned is a different hex string, so a picture's colours identify threads exactly.

``shade(k)`` is CuTe print_latex's eight grey levels (a cell's offset mod 8), lightened so that
black text stays readable; ``heat(n)`` is a sequential ramp for big pictures without labels.

>>> categorical(3)
['#77AADD', '#EE8866', '#44BB99']
>>> len(set(categorical(300)))
300
"""

from __future__ import annotations

import colorsys
from functools import lru_cache

__all__ = ["TOL_LIGHT", "HOLE", "categorical", "shade", "heat", "ansi256", "hex_to_rgb"]

# Paul Tol's "light" qualitative scheme, reordered so that the first few are far apart.
TOL_LIGHT = ["#77AADD", "#EE8866", "#44BB99", "#EEDD88", "#FFAABB", "#99DDFF", "#BBCC33", "#AAAA00"]

#: fill of a cell that no one owns / that no coordinate maps to
HOLE = "#FFFFFF"

# CuTe's print_latex greys (black!00, 40, 20, 60, 10, 50, 30, 70), scaled to stay legible.
_GREYS = [0, 40, 20, 60, 10, 50, 30, 70]


def hex_to_rgb(h: str) -> tuple[int, int, int]:
    return int(h[1:3], 16), int(h[3:5], 16), int(h[5:7], 16)


def _rgb_to_hex(r: int, g: int, b: int) -> str:
    return f"#{r:02X}{g:02X}{b:02X}"


def _interleave(n: int) -> list[float]:
    """n positions in [0, 1], ordered so that consecutive ones are far apart (van der Corput)."""
    out = []
    for i in range(n):
        x, f, k = 0.0, 0.5, i
        while k:
            x += f * (k & 1)
            k >>= 1
            f /= 2
        out.append(x)
    return out


@lru_cache(maxsize=64)
def _categorical(n: int) -> tuple[str, ...]:
    base = len(TOL_LIGHT)
    cycles = -(-n // base)
    # cycle 0 is the scheme itself (lightness ~0.6-0.8); later cycles alternate between a
    # darker (0.36-0.52) and a paler (0.84-0.93) version, each side spread evenly
    dark = [0.52 - 0.16 * x for x in _interleave(cycles)]
    pale = [0.86 + 0.07 * x for x in _interleave(cycles)]
    levels = [0.0] + [(dark if k % 2 else pale)[(k - 1) // 2] for k in range(1, cycles)]
    seen: set[str] = set()
    out = []
    for i in range(n):
        c, k = TOL_LIGHT[i % base], i // base
        if k:
            r, g, b = (v / 255 for v in hex_to_rgb(c))
            h, _, s = colorsys.rgb_to_hls(r, g, b)
            r, g, b = colorsys.hls_to_rgb(h, levels[k], s * 0.7)
            c = _rgb_to_hex(round(r * 255), round(g * 255), round(b * 255))
        while c in seen or c == HOLE:  # keep colours distinct: nudge the blue channel
            r, g, b = hex_to_rgb(c)
            c = _rgb_to_hex(r, g, (b + 1) % 256)
        seen.add(c)
        out.append(c)
    return tuple(out)


def categorical(n: int) -> list[str]:
    """n distinct colours (hex strings), colour-blind friendly for n <= 8, cycling lightness after."""
    return list(_categorical(int(n)))


def shade(k: int) -> str:
    """CuTe print_latex's grey for key k (k mod 8), lightened: black!p becomes roughly black!(p/2)."""
    p = _GREYS[k % 8] / 2
    v = round(255 * (1 - p / 100))
    return _rgb_to_hex(v, v, v)


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
