"""What a Layout knows of itself (layout._facts_of) and the fast paths that read it: the same answers
as the general code, on random layouts (flat and nested, strides of any sign, shape-1 modes)."""

import random

import pytest

import cutelab as cute
from cutelab import algebra as A
from cutelab import int_tuple as it
from cutelab.layout import _facts_of, _plain_crd2idx, check_fits


def _random_layout(rng, depth):
    n = rng.randint(1, 4)

    def mode(d):
        if d <= 1 or rng.random() < 0.4:
            return rng.choice([1, 2, 3, 4]), rng.choice([0, 1, 2, 3, 5, 8, -1, -4, 16])
        k = rng.randint(1, 3)
        parts = [mode(d - 1) for _ in range(k)]
        return tuple(p[0] for p in parts), tuple(p[1] for p in parts)

    parts = [mode(depth) for _ in range(n)]
    if n == 1 and rng.random() < 0.5:
        return cute.make_layout(parts[0][0], stride=parts[0][1])
    return cute.make_layout(tuple(p[0] for p in parts), stride=tuple(p[1] for p in parts))


def _coords(shape):
    if isinstance(shape, tuple):
        out = [()]
        for s in shape:
            out = [c + (x,) for c in out for x in _coords(s)]
        return out
    return list(range(shape))


@pytest.mark.parametrize("seed", range(6))
def test_facts_match_the_layout(seed):
    rng = random.Random(seed)
    for _ in range(150):
        L = _random_layout(rng, rng.randint(1, 3))
        if it.product(L.shape) > 4096:
            continue
        size, pairs, plain, fits, lo, hi, ones = _facts_of(L)
        offs = [it.crd2idx(i, L.shape, L.stride) for i in range(it.product(L.shape))]
        assert plain and fits
        assert size == it.product(L.shape) == len(offs) == cute.size(L)
        assert (lo, hi) == (min(offs), max(offs))
        assert cute.cosize(L) == it.product(cute.layout.coshape(L))
        assert pairs == tuple((s, d) for s, d in zip(it.flatten_to_tuple(L.shape), it.flatten_to_tuple(L.stride)) if s != 1)
        assert ones == any(s == 1 and d != 0 for s, d in zip(it.flatten_to_tuple(L.shape), it.flatten_to_tuple(L.stride)))


@pytest.mark.parametrize("seed", range(4))
def test_evaluation_fast_paths_agree_with_crd2idx(seed):
    rng = random.Random(100 + seed)
    for _ in range(60):
        L = _random_layout(rng, rng.randint(1, 3))
        if it.product(L.shape) > 4096:
            continue
        for i in range(min(it.product(L.shape), 64)):
            assert L(i) == it.crd2idx(i, L.shape, L.stride)
        for c in _coords(L.shape)[:64]:
            assert L(c) == _plain_crd2idx(c, L.shape, L.stride) == it.crd2idx(c, L.shape, L.stride)


def test_out_of_range_and_odd_coordinates_keep_their_errors():
    L = cute.make_layout(((2, 3), 4), stride=((1, 8), 2))
    with pytest.raises(cute.LayoutError, match="out of range"):
        L(24)
    with pytest.raises(cute.LayoutError, match="does not match the shape"):
        L((1, 4))
    with pytest.raises(TypeError, match="must be integers"):
        L((1.0, 2))
    with pytest.raises(TypeError, match="must be integers"):
        L(True)
    assert str(L((None, 1))) == "((2,3)):((1,8))"


@pytest.mark.parametrize("seed", range(3))
def test_results_marked_to_fit_do_fit(seed):
    """A result the algebra marks as fitting in 64 bits passes the full check too."""
    rng = random.Random(200 + seed)
    ops = [lambda a, b: cute.composition(a, b), lambda a, b: cute.logical_divide(a, b),
           lambda a, b: cute.logical_product(a, b), lambda a, b: cute.zipped_divide(a, (b,)),
           lambda a, b: cute.coalesce(a), lambda a, b: cute.right_inverse(a), lambda a, b: cute.complement(b, 64)]
    checked = 0
    for _ in range(400):
        a, b = _random_layout(rng, 2), _random_layout(rng, 1)
        for op in ops:
            try:
                r = op(a, b)
            except cute.LayoutError:
                continue
            if isinstance(r, cute.Layout) and r._facts is not None and r._facts[3]:
                fresh = cute.make_layout(r.shape, stride=r.stride)  # validated from scratch
                assert check_fits(fresh, "x") is fresh
                checked += 1
    assert checked > 100


def test_huge_stride_of_a_shape_1_mode_is_still_refused():
    lhs, rhs = cute.make_layout(2, stride=2 ** 40), cute.make_layout((1, 2), stride=(2 ** 40, 1))
    with pytest.raises(cute.LayoutError, match="does not fit in 64 bits"):
        cute.composition(lhs, rhs)
    assert A._compose_plain((2, 3), (1, 2), 3, 2, None) == A._compose((2, 3), (1, 2), 3, 2, None)


@pytest.mark.parametrize("seed", range(4))
def test_facts_built_with_results_are_the_layouts_own(seed):
    """The fast paths build results with their facts (complement, composition, the divides, the products,
    right_inverse, the modes of a tuple tiler): the same facts a fresh layout of that shape and stride has."""
    rng = random.Random(300 + seed)
    ops = [lambda a, b: cute.composition(a, b), lambda a, b: cute.logical_divide(a, b),
           lambda a, b: cute.logical_product(b, a), lambda a, b: cute.zipped_divide(a, (b, b)),
           lambda a, b: cute.right_inverse(a), lambda a, b: cute.complement(b, 96),
           lambda a, b: cute.complement(a, (4, 8))]
    checked = 0
    for _ in range(300):
        a, b = _random_layout(rng, 2), _random_layout(rng, 1)
        for op in ops:
            try:
                r = op(a, b)
            except cute.LayoutError:
                continue
            f = r._facts
            if f is not None and f[2]:
                assert f == cute.make_layout(r.shape, stride=r.stride)._facts, (r, f)
                checked += 1
    assert checked > 100


def test_complement_fast_entry_keeps_the_ops_face():
    """complement answers plain (Layout, int) calls before the op wrapper; its name, doc, signature and
    its errors (operands named as they were passed) are the op's."""
    import inspect

    assert cute.complement.__name__ == "complement" and "cotarget" in cute.complement.__doc__
    assert list(inspect.signature(cute.complement).parameters) == ["layout", "cotarget"]
    lay = cute.make_layout((2, 12), stride=(16, 1))
    with pytest.raises(cute.LayoutError, match=r"^complement\(\(2,12\):\(16,1\), 96\): no complement exists"):
        cute.complement(lay, 96)
    with pytest.raises(cute.LayoutError, match=r"^complement\(\(2,12\):\(16,1\)\): no complement exists"):
        cute.complement(lay, cotarget=96)
    assert str(cute.complement(cute.make_layout(4, stride=2), 8)) == "2:1"


@pytest.mark.parametrize("name, args, kw, message", [
    ("coalesce", (), {"target_profile": (1, 2, 3)}, r"^coalesce\(\(2,12\):\(16,1\)\): too many target profile modes"),
    ("composition", ("_lay", "_neg"), {}, r"^composition\(\(2,12\):\(16,1\), 4:-1\): the right operand has the negative stride"),
    ("right_inverse", (3,), {}, r"^right_inverse\(3\): the layout must be a Layout"),
    ("left_inverse", ("_neg",), {}, r"^left_inverse\(4:-1\): left inverse needs non-negative strides"),
    ("logical_divide", ("_lay", "_neg"), {}, r"^logical_divide\(\(2,12\):\(16,1\), 4:-1\): complement needs non-negative"),
    ("logical_divide", ("_lay", ("_neg",)), {}, r"^logical_divide\(\(2,12\):\(16,1\), \(4:-1\)\): complement needs"),
    ("zipped_divide", ("_lay", ("_neg", "_neg", "_neg")), {}, r"^zipped_divide\(\(2,12\):\(16,1\), \(4:-1,4:-1,4:-1\)\): too many tiler modes"),
    ("logical_product", ("_lay", "_neg"), {}, None),
])
def test_fast_entries_keep_the_ops_face(name, args, kw, message):
    """The ops that answer plain calls before the op wrapper keep the op's name, doc and signature, and
    their errors name the operation and the operands as they were passed, positionally or by keyword."""
    import inspect

    f = getattr(cute, name)
    op = getattr(A, f"_{name}_op")
    assert f.__name__ == name and f.__doc__ == op.__doc__ and f.__doc__
    assert inspect.signature(f) == inspect.signature(op)
    vals = {"_lay": cute.make_layout((2, 12), stride=(16, 1)), "_neg": cute.make_layout(4, stride=-1)}
    conv = tuple(tuple(vals.get(y, y) for y in x) if isinstance(x, tuple) else vals.get(x, x) for x in args)
    if not args:
        conv = (vals["_lay"],)
    if message is None:  # answered: the same answer as the op's own path
        assert f(*conv) == op(*conv)
        return
    with pytest.raises(cute.LayoutError, match=message):
        f(*conv, **kw)
    with pytest.raises(cute.LayoutError, match=message):
        op(*conv, **kw)
