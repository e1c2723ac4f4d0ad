"""What the SM100 golden tests share: loading a case file that scripts/make_golden_tcgen05.py wrote, and
comparing cutelab's answer with CuTe DSL's (an equal answer, or an error on both sides)."""

import json
import os

from cutelab import numeric
from cutelab.errors import LayoutError, TensorError

GOLDEN = os.path.join(os.path.dirname(__file__), "..", "golden")


def load_cases(name):
    with open(os.path.join(GOLDEN, name)) as f:
        return json.load(f)["cases"]


def dtype(name):
    return getattr(numeric, name)


def reason(err):
    """The DSL's message without its leading exception name."""
    return err.split(": ", 1)[1] if ": " in err else err


def answer(f):
    """f()'s result, or {"error": message} where cutelab refuses it."""
    try:
        return f()
    except (LayoutError, TensorError, ValueError, TypeError) as e:
        return {"error": str(e)}


def same(got, dsl):
    if isinstance(dsl, dict) and "error" in dsl:
        return isinstance(got, dict) and "error" in got
    return got == dsl


def as_tuple(x):
    """JSON lists back as the nested tuples they were."""
    return tuple(as_tuple(e) for e in x) if isinstance(x, list) else x


def pretty(x):
    """A nested tuple in CuTe's notation (None as '_')."""
    if isinstance(x, tuple):
        return "(" + ",".join(pretty(e) for e in x) + ")"
    return "_" if x is None else str(x)
