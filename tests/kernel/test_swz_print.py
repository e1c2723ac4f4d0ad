"""The CUDA printer's swizzle rewrite: sw(X + c) prints as (sw(X) ^ k) + c_add only where that is
the same value for every value of X's atoms (cuda.swz_split), and the printed C computes it.

The identity is checked exhaustively over small domains (every swizzle with top = m+s+b <= 7,
every constant in a window, every value of the atoms), by random testing against direct
evaluation, and through the printed C text (evaluated in Python, and compiled with g++ where
it is installed)."""

from __future__ import annotations

import random
import re
import shutil
import subprocess

import numpy as np
import pytest

from cutelab.kernel.cuda.printer import _possible_bits, int_expr, swz_split
from cutelab.kernel.ir.symbolic import Expr, Swz, Var, add, evaluate, mul, swizzle_expr
from cutelab.kernel.ir.nodes import LoopVar

GXX = shutil.which("g++")


def sw(v, b, m, s):
    """CuTe's Swizzle<b,m,s> of an int (or numpy int64 array), directly."""
    return v ^ ((v & (((1 << b) - 1) << (m + s))) >> s)


def swizzles(max_top=7):
    for b in range(1, 4):
        for s in range(1, 4):
            for m in range(0, 4):
                if m + s + b <= max_top:
                    yield b, m, s


# atoms over two indices: t in [0, 32) and a loop variable that can be negative, of divisor 4
T = Var("tid.x", 32)
L = LoopVar("i0", -8, 8, 4)  # values -8, -4, 0, 4, 8
GRID = {"tid.x": np.repeat(np.arange(32), 5), "loop.i0": np.tile(np.arange(-8, 9, 4), 32)}


def candidates():
    """Non-constant sums X (no constant term), non-negative and signed, with and without carries."""
    t, i = T, L
    return [
        mul(t, 8), mul(t, 2), t,
        add(mul(t % 2, 8), mul(t // 2, 64)),  # disjoint bits: 3 and 6..9
        add(mul(t % 4, 2), mul(t // 8, 16)),  # bits 1..2 and 4..5
        add(mul(t % 8, 3), mul(t // 8, 32)),  # an odd coefficient
        add(mul(t % 16, 4), mul(t // 16, 4)),  # overlapping: may carry
        mul(t % 5, 16),
        add(mul(i, 16), mul(t % 4, 2)),  # a term that can be negative, a multiple of 64
        add(mul(i, 1), t % 4),  # negative, multiple of 4, over bits 0..1
        add(mul(i, -2), mul(t % 2, 1)),  # negative coefficient
        mul(i, 8),
    ]


def test_possible_bits_cover_every_value():
    for x in candidates():
        mask = _possible_bits(x)
        v = evaluate(x, GRID)
        assert np.all((v & ~mask) == 0), x.expr_str()
    # the bounds are tight enough to be useful: disjoint terms give exactly their bits
    assert _possible_bits(add(mul(T % 2, 8), mul(T // 2, 64))) == 0b1111001000
    assert _possible_bits(add(mul(L, 16), mul(T % 4, 2))) == ~63 | 0b110


def test_split_identity_exhaustive():
    """For every swizzle with top <= 7, every candidate X, every constant in [-2**(top+1), 2**(top+1)):
    where swz_split accepts, (sw(X) ^ k) + c_add == sw(X + c) at every point of the domain."""
    accepted = refused = 0
    for b, m, s in swizzles():
        top = m + s + b
        for x in candidates():
            xv = evaluate(x, GRID)
            for c in range(-(2 << top), 2 << top):
                e = swizzle_expr(add(x, c), b, m, s)
                if not isinstance(e, Swz):
                    continue
                split = swz_split(e)
                if split is None:
                    refused += 1
                    continue
                accepted += 1
                x2, k, c_add = split
                assert c_add % (1 << top) == 0 and 0 <= k < (1 << top)
                assert (x2.key if isinstance(x2, Expr) else x2) == x.key
                np.testing.assert_array_equal((sw(xv, b, m, s) ^ k) + c_add, sw(xv + c, b, m, s),
                                              err_msg=f"{e.expr_str()} split {k}, {c_add}")
    assert accepted > 1000 and refused > 1000, (accepted, refused)


def test_a_constant_that_can_carry_is_refused_and_would_be_wrong():
    # 8 * t + 8: bit 3 of X and of c overlap; the naive split would be wrong for t = 1
    e = swizzle_expr(add(mul(T, 8), 8), 3, 3, 3)
    assert swz_split(e) is None
    naive = [(sw(8 * t, 3, 3, 3) ^ sw(8, 3, 3, 3)) for t in range(32)]
    assert naive != [sw(8 * t + 8, 3, 3, 3) for t in range(32)]
    # a carry through overlapping terms: (t % 16) * 4 + (t // 16) * 4 reaches bit 2 from both
    assert swz_split(swizzle_expr(add(add(mul(T % 16, 4), mul(T // 16, 4)), 64), 2, 3, 3)) is None
    # a multiple of 2**top alone needs no proof: any X, negative terms included
    e = swizzle_expr(add(L, 1536), 3, 3, 3)
    x, k, c_add = swz_split(e)
    assert (x.key, k, c_add) == (L.key, 0, 1536)
    # but a low part over bits a negative term can set is refused (L is a multiple of 4 only)
    assert swz_split(swizzle_expr(add(L, 576), 3, 3, 3)) is None


def test_split_random_against_direct_evaluation():
    rng = random.Random(1234)
    n_acc = 0
    for _ in range(400):
        b, m, s = rng.randint(1, 3), rng.randint(0, 4), rng.randint(1, 4)
        top = m + s + b
        t = Var("tid.x", rng.choice([32, 64, 128, 256]))
        u = LoopVar("k", rng.choice([0, -64]), rng.choice([7, 64]), rng.choice([1, 2, 8, 64, 256]))
        atoms = [t, t % rng.choice([2, 4, 8, 16]), t // rng.choice([2, 4, 8, 32]),
                 (t // rng.choice([4, 8])) % rng.choice([2, 4]), u, u % 3]
        x = 0
        for a in rng.sample(atoms, rng.randint(1, 3)):
            coef = rng.choice([1, 2, 8, 16, 64, 512, 1024, 8192, 3, -8])
            x = add(x, mul(a, coef))
        if not isinstance(x, Expr):
            continue
        c = rng.choice([rng.randrange(-4096, 4096), rng.randrange(0, 1 << top), rng.randrange(1, 64) << top,
                        rng.randrange(1, 64) * 16 + (1 << top) * rng.randrange(0, 8)])
        e = swizzle_expr(add(x, c), b, m, s)
        if not isinstance(e, Swz):
            continue
        split = swz_split(e)
        if split is None:
            continue
        n_acc += 1
        x2, k, c_add = split
        env = {"tid.x": np.arange(t.extent).repeat(8),
               "loop.k": np.array([rng.randint(u.lo, u.hi) // u.div * u.div for _ in range(8 * t.extent)])}
        xv = evaluate(x2, env)
        np.testing.assert_array_equal((sw(xv, b, m, s) ^ k) + c_add, evaluate(e, env), err_msg=e.expr_str())
    assert n_acc > 100, n_acc


# ---------------------------------------------------------------- the printed C

def _c_to_python(code: str) -> str:
    code = re.sub(r"\(\((?:unsigned int|unsigned long long|int|long long)\)threadIdx\.x\)", "T", code)
    code = re.sub(r"\(\((?:unsigned int|unsigned long long|int|long long)\)i0\)", "I", code)
    code = re.sub(r"(\d+)(?:ull|ll|u)\b", r"\1", code)
    assert "cl_" not in code and "threadIdx" not in code, code
    return code.replace("/", "//")


def _printed_cases():
    t = Var("tid.x", 256)
    i0 = LoopVar("i0", 0, 125, 1)
    # the shape of sm80_gemm's ldmatrix addresses: Swizzle<3,3,3> over bytes, a k-block/fragment constant
    x = add(add(add(mul((t // 16) % 2, 8), mul((t // 32) % 2, 1024)), mul(i0 % 3, 8192)), mul(t % 16, 64))
    cases = [(swizzle_expr(add(x, c), 3, 3, 3), "unsigned int") for c in (16, 2064, 4112, 6160, 1024, 8)]
    neg = LoopVar("i0", -4, 4, 1)
    y = add(mul(neg, 256), mul(t % 8, 16))  # signed: a negative loop variable
    cases += [(swizzle_expr(add(y, c), 2, 4, 2), "int") for c in (4, 8, 260, -252, 1028)]
    return cases, t, i0, neg


def test_printed_text_shares_the_swizzle_and_computes_it():
    cases, t, i0, neg = _printed_cases()
    texts = []
    for e, ty in cases:
        code, ctype = int_expr(e)
        assert ctype == ty
        texts.append(code)
        loop = neg if ty == "int" else i0
        for tv in range(256):
            for iv in (range(loop.lo, loop.hi + 1) if ty == "int" else (0, 1, 2, 3, 124, 125)):
                env = {"tid.x": tv, loop.name: iv}
                got = eval(_c_to_python(code), {"T": tv, "I": iv})
                if ty == "unsigned int":
                    got &= 0xFFFFFFFF
                assert got == evaluate(e, env), (code, tv, iv)
    # sm80's accesses: one swizzle text, then an XOR with a constant and/or an immediate add
    x_text = int_expr(cases[0][0].a)[0].replace(" + 16u)", ")")
    sw_text = f"({x_text} ^ (({x_text} & 448u) >> 3))"
    assert texts[0] == f"({sw_text} ^ 16u)"
    assert texts[1] == f"(({sw_text} ^ 16u) + 2048u)"
    assert texts[4] == f"({sw_text} + 1024u)"
    a8 = x_text[:-1] + " + 8u)"
    assert texts[5] == f"({a8} ^ (({a8} & 448u) >> 3))"  # bit 3 of X and of 8: may carry, printed as before


@pytest.mark.skipif(GXX is None, reason="g++ is not installed")
def test_printed_text_compiles_and_computes_it_in_cpp(tmp_path):
    cases, t, i0, neg = _printed_cases()
    body, want = [], []
    for n, (e, ty) in enumerate(cases):
        code, _ = int_expr(e)
        loop = neg if ty == "int" else i0
        body.append(f"for (int i0 = {loop.lo}; i0 <= {loop.hi}; ++i0) for (unsigned x = 0; x < 256; ++x) "
                    f"{{ threadIdx.x = x; printf(\"%lld\\n\", (long long)({code})); }}")
        for iv in range(loop.lo, loop.hi + 1):
            for tv in range(256):
                want.append(int(evaluate(e, {"tid.x": tv, loop.name: iv})))
    src = ("#include <cstdio>\nstruct { unsigned x, y, z; } threadIdx;\nint main() {\n"
           + "\n".join(body) + "\nreturn 0;\n}\n")
    (tmp_path / "k.cpp").write_text(src)
    c = subprocess.run([GXX, "-O1", "-o", str(tmp_path / "k"), str(tmp_path / "k.cpp")], capture_output=True,
                       text=True, timeout=300)
    assert c.returncode == 0, c.stderr[-3000:]
    r = subprocess.run([str(tmp_path / "k")], capture_output=True, text=True, timeout=300)
    assert [int(v) for v in r.stdout.split()] == want


def test_swizzles_without_a_constant_or_over_one_atom_print_as_before():
    t = Var("tid.x", 128)
    e = swizzle_expr(mul(t, 64), 3, 3, 3)
    x = "(64u * ((unsigned int)threadIdx.x))"
    assert int_expr(e)[0] == f"({x} ^ (({x} & 448u) >> 3))"
    assert swz_split(e) is None


def test_signed_values_too_wide_for_int_are_not_rewritten():
    # X = i0 + i1 reaches 2**31 (each term fits an int, the sum does not) while X - 2**30 + 16
    # fits: the printer keeps the direct form rather than compute X in an int and overflow
    i0, i1 = LoopVar("i0", 0, 1 << 30, 1024), LoopVar("i1", 0, 1 << 30, 1024)
    e = swizzle_expr(add(add(i0, i1), -(1 << 30) + 16), 3, 3, 3)
    assert swz_split(e) is not None  # the identity holds...
    code, ctype = int_expr(e)
    assert ctype == "int"
    assert code.count("1073741808") == 2 and "^ 16)" not in code  # ...but is not printed
    # the same with a narrower range is rewritten
    j0, j1 = LoopVar("i0", 0, 1 << 29, 1024), LoopVar("i1", 0, 1 << 29, 1024)
    code, ctype = int_expr(swizzle_expr(add(add(j0, j1), -(1 << 29) + 16), 3, 3, 3))
    assert ctype == "int" and code.endswith("^ 16) - 536870912)"), code
