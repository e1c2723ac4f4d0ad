"""Known bits of index expressions: ``possible_bits(x)`` bounds every bit a sum of scaled atoms can
set. The front end proves a moving view's register is a multiple of a power of two with it
(``frontend/control.py``); the CUDA printer splits constants out of swizzles with it
(``cuda/intexpr.py: swz_split``).
"""

from __future__ import annotations

from typing import Any

from ..ir.symbolic import Lin


def possible_bits(x: Any) -> int:
    """A mask holding every bit that x (a sum of coef * atom, no constant) can set, as a Python
    int in two's complement (negative: infinitely many high bits). A term coef * atom is a
    multiple of 2**tz, tz the trailing zeros of coef * atom.div, so it sets no bit below tz;
    with atom in [0, hi] and coef > 0 it sets none from the bit length of coef * hi up; a term
    that can be negative may set every bit from tz up. Terms whose masks are pairwise disjoint
    add without carries (a + b == a | b where a & b == 0, for any signs), so the sum's mask is
    their union; otherwise the sum is a multiple of the smallest 2**tz, and at most the sum of
    the upper bounds where no term can be negative. An atom with a possible-bits mask of its own
    (``bits``: a register whose values are known bit by bit, see trace.RegVar) times a power of
    two 2**j sets only that mask shifted by j (the product is a shift in two's complement too)."""
    terms = x.terms if isinstance(x, Lin) else ((x, 1),)
    masks, lows, hi_sum, nonneg = [], [], 0, True
    for atom, coef in terms:
        d = abs(coef) * (atom.div if atom.div > 0 else 1)
        tz = (d & -d).bit_length() - 1
        lows.append(tz)
        if coef > 0 and atom.lo >= 0:
            hi = coef * atom.hi
            hi_sum += hi
            m = ((1 << hi.bit_length()) - 1) & ~((1 << tz) - 1)
        else:
            nonneg = False
            m = ~((1 << tz) - 1)
        known = getattr(atom, "bits", None)
        if known is not None and coef > 0 and coef & (coef - 1) == 0:
            m &= known << (coef.bit_length() - 1)
        masks.append(m)
    union = 0
    for m in masks:
        if union & m:  # terms can carry into each other: bound the sum as a whole
            low = ~((1 << min(lows)) - 1)
            return ((1 << hi_sum.bit_length()) - 1) & low if nonneg else low
        union |= m
    return union
