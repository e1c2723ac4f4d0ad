"""The fuzz harness of issue 23, kept as a test: random and hostile input to the algebra, the
parsers, swizzles, the command line and the playground server, asserting that every call either
answers with a result that has CuTe's properties or refuses with cutelab's own error (a
LayoutError naming the operation), never a raw Python exception, a hang or a 500.

Each target runs Hypothesis examples in rounds (a fixed seed per round: SEED, SEED+1, ...) until
its time budget is spent, so CI spends a few seconds per target and a failure names its seed
and the shrunk input. Budget and seed come from the environment:

    CUTELAB_FUZZ_SECONDS   seconds per target (default 2)
    CUTELAB_FUZZ_SEED      the first round's seed (default 23)

For a release, run a long campaign, e.g. ten minutes per target:

    CUTELAB_FUZZ_SECONDS=600 python -m pytest -q -p no:cacheprovider tests/fuzz

and a different part of the input space with another CUTELAB_FUZZ_SEED.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import traceback
import urllib.error
import urllib.request
from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

import cutelab as cute
from cutelab import Layout, LayoutError
from cutelab import algebra as A
from cutelab import int_tuple as it
from cutelab.layout import dice, get_hier_coord, shape_div
from cutelab.swizzle import parse_composed

from strategies import ext_eval, injective_layouts, layouts

BUDGET = float(os.environ.get("CUTELAB_FUZZ_SECONDS", "2"))
SEED = int(os.environ.get("CUTELAB_FUZZ_SEED", "23"))
ROUND = 40  # examples per round


def fuzz(make_test: Callable[[], Callable], examples: int = ROUND) -> None:
    """Run the @given test that make_test builds in seeded rounds until the budget is spent."""
    t0 = time.monotonic()
    r = 0
    while r == 0 or time.monotonic() - t0 < BUDGET:
        test = settings(max_examples=examples, deadline=None, database=None, derandomize=False,
                        suppress_health_check=list(HealthCheck))(make_test())
        seed(SEED + r)(test)()
        r += 1


def refused(e: BaseException, op: str) -> bool:
    """cutelab's own refusal: a LayoutError, or a TypeError that cutelab raised itself (a `raise`
    statement in cutelab's source, with its message), not one Python raised inside our code."""
    if isinstance(e, LayoutError):
        return True
    if not isinstance(e, TypeError):
        return False
    last = traceback.extract_tb(e.__traceback__)[-1]
    return f"{os.sep}cutelab{os.sep}" in last.filename and (last.line or "").lstrip().startswith("raise")


def call(op: str, f: Callable, *args: Any) -> Any:
    """f(*args), or None where cutelab refuses; any other exception fails with the operands."""
    try:
        return f(*args)
    except Exception as e:  # noqa: BLE001 - the point is to see every kind
        if refused(e, op):
            return None
        raise AssertionError(f"{op}{args!r} raised a raw {type(e).__name__}: {e}") from e


# --------------------------------------------------------------------------- operands

JUNK = st.sampled_from([None, "4", 1.5, (), (0,), (1, None), -1, 0, 2**40, True, [2, 2], (2, (3, 0))])
SMALL = st.integers(-3, 12)


def operand() -> st.SearchStrategy:
    return st.one_of(layouts(max_size=256), injective_layouts(max_size=256), JUNK, SMALL)


def offsets(L: Layout) -> list[int]:
    return L.offsets().tolist()


# --------------------------------------------------------------------------- targets

def test_algebra():
    def make():
        @given(a=operand(), b=operand(), c=st.one_of(SMALL, JUNK))
        def t(a, b, c):
            if isinstance(a, Layout):
                r = call("coalesce", A.coalesce, a)
                assert r is not None and offsets(r) == offsets(a)
                r = call("right_inverse", A.right_inverse, a)
                if r is not None and r.size() <= 1 << 16:
                    assert all(a(r(i)) == i for i in range(r.size()))
                r = call("left_inverse", A.left_inverse, a)
                if r is not None and len(set(offsets(a))) == a.size():
                    assert all(ext_eval(r, a(i)) == i for i in range(a.size()))
                r = call("complement", A.complement, a, c)
                if r is not None and r.size() <= 1 << 16:
                    o = offsets(r)
                    assert all(x < y for x, y in zip(o, o[1:])), (a, c, r)
                    assert not set(o[1:]) & set(offsets(a)), (a, c, r)
                if isinstance(c, int) and 0 <= c < 400:
                    hit = call("get_hier_coord", get_hier_coord, a, c)
                    if hit is not None:
                        assert a(hit) == c
                call("upcast", A.upcast, a, c)
                call("downcast", A.downcast, a, c)
                call("dice", dice, a, b)
                call("tile_to_shape", A.tile_to_shape, a, b)
            if isinstance(a, Layout) and isinstance(b, Layout):
                r = call("composition", A.composition, a, b)
                if r is not None:
                    assert r.size() == b.size() or not isinstance(b.shape, int)
                    assert all(r(i) == ext_eval(a, b(i)) for i in range(b.size()) if b(i) >= 0), (a, b, r)
                for name in ("logical_product", "blocked_product", "raked_product", "zipped_product"):
                    r = call(name, getattr(A, name), a, b)
                    if r is not None:
                        assert r.size() == a.size() * b.size(), (name, a, b, r)
                for name in ("logical_divide", "zipped_divide", "tiled_divide"):
                    call(name, getattr(A, name), a, b)
                call("max_common_vector", A.max_common_vector, a, b)
            if isinstance(b, tuple) or isinstance(b, int):
                r = call("make_ordered_layout", cute.make_ordered_layout, b, c)
                if r is not None and r.size() < 4096:
                    assert len(set(offsets(r))) == r.size(), (b, c, r)
                call("shape_div", shape_div, b, c)
        return t

    fuzz(make)


_NOTATION = st.text(alphabet="()0123456789,:_-S<>o ?", max_size=24)


def test_parsing():
    def make():
        @given(s=st.one_of(_NOTATION, st.builds(lambda L: str(L), layouts(max_size=256))))
        def t(s):
            L = call("parse", Layout.parse, s)
            if L is not None and not isinstance(L, Layout):
                return
            if L is not None:
                assert Layout.parse(str(L)) == L
            call("parse_tuple", cute.parse_tuple, s)
            call("parse_composed", parse_composed, s)
        return t

    fuzz(make)


def test_swizzles():
    def make():
        @given(b=st.integers(-2, 6), m=st.integers(-2, 6), s=st.integers(-7, 7), L=layouts(max_size=256),
               off=st.integers(-4, 64))
        def t(b, m, s, L, off):
            sw = call("make_swizzle", cute.make_swizzle, b, m, s)
            if sw is None:
                return
            xs = np.arange(1 << 12, dtype=np.int64)
            assert (sw(sw(xs)) == xs).all()  # an involution
            c = call("make_composed_layout", cute.make_composed_layout, sw, off, L)
            if c is not None:
                got = call("offsets", lambda: np.asarray(c.offsets()))
                if got is not None:
                    want = sw(np.asarray(offsets(L), dtype=np.int64) + off)
                    assert (got == want).all()
                r = call("parse_composed", parse_composed, str(c))
                if r is not None:
                    assert str(r) == str(c)
        return t

    fuzz(make)


# --------------------------------------------------------------------------- command line

_LAYOUT_TEXT = st.one_of(st.sampled_from(["8:1", "(4,8):(8,1)", "()", "(0,2)", "(2,2):(0,0)", "1:0", "(4096,1)",
                                          "S<3,4,3> o 0 o (8,64):(64,1)", "x", "", "(2,(2,2)):(4,(1,2))"]),
                         st.builds(str, layouts(max_size=128)), _NOTATION)
_OPTS = st.sampled_from(["--tile", "--threads", "--elem-bits", "--atoms", "--perm", "--op", "--coord", "-o"])
_OPT_VAL = st.one_of(st.sampled_from(["4,8", "-16", "0", "2x2x1", "sm80_16x8x16", "()", "16", "x.bogus", "1000000"]),
                     _LAYOUT_TEXT)


def test_command_line(capsys, tmp_path, monkeypatch):
    from cutelab.cli import main

    monkeypatch.chdir(tmp_path)

    def make():
        @given(cmd=st.sampled_from(["show", "coords", "tv", "explain", "partition", "swizzle", "mma", "copy",
                                    "bogus"]),
               words=st.lists(st.one_of(_LAYOUT_TEXT, _OPTS, _OPT_VAL,
                                        st.sampled_from(["complement", "composition", "outer", "tv", "tiled"])),
                              max_size=5))
        def t(cmd, words):
            argv = [cmd] + [w for w in words if w != "-o"]  # no files written
            t0 = time.monotonic()
            try:
                rc = main(argv)
            except SystemExit as e:  # argparse
                rc = e.code
            out, err = capsys.readouterr()
            assert time.monotonic() - t0 < 30, argv
            assert rc in (0, 2), (argv, rc, err)
            if rc == 2:
                assert err.count("\n") == 1 and ": error: " in err, (argv, err)
                assert "please report" not in err and "Traceback" not in err, (argv, err)
        return t

    fuzz(make, examples=8)  # a picture may take a second: short rounds keep to the budget


# --------------------------------------------------------------------------- server

_FIELD = st.one_of(_LAYOUT_TEXT, st.sampled_from(["4096", "65536x65536x16", "2x2x1", "16,64", "1:1", "-1", "x" * 300]))


@pytest.fixture(scope="module")
def live_server():
    from cutelab.web import make_server
    from cutelab.web.server import url_of

    srv = make_server(0)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    yield url_of(srv)
    srv.shutdown()
    srv.server_close()


def test_server_requests(live_server):
    from cutelab.web import TABS
    from cutelab.web.server import figure_json

    names = sorted({f.name for t in TABS.values() for f in t.fields})

    def make():
        @given(tab=st.one_of(st.sampled_from(sorted(TABS)), st.text(max_size=8)),
               values=st.dictionaries(st.sampled_from(names), _FIELD, max_size=4))
        def t(tab, values):
            status, data = figure_json(tab, values)
            assert status in (200, 400, 413), (tab, values, status, data)
            assert data["ok"] == (status == 200) and (status == 200 or data["error"]), (tab, values, data)
            assert "please report" not in data.get("error", ""), (tab, values, data)
        return t

    fuzz(make, examples=10)

    host, port = live_server.split("//")[1].strip("/").split(":")

    def make_raw():
        @given(path=st.one_of(st.text(alphabet="/abcdefgh.%?&=_-0123456789", max_size=40),
                              st.builds(lambda n: "/static/" + "a" * n, st.integers(0, 6000))),
               dup_host=st.booleans())
        def t(path, dup_host):
            path = "/" + path.lstrip("/")
            head = f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
            if dup_host:
                head += "Host: evil.example\r\n"
            with socket.create_connection((host, int(port)), timeout=30) as s:
                s.sendall((head + "Connection: close\r\n\r\n").encode())
                answer = b""
                while chunk := s.recv(65536):
                    answer += chunk
            assert answer.startswith(b"HTTP/1."), (path, answer[:100])
            code = int(answer.split(b" ", 2)[1])
            assert code < 500 and (code == 400 or not dup_host), (path, dup_host, answer[:200])
        return t

    fuzz(make_raw)
