"""CuTe DSL's print_tensor text (cutelab.tensor.print_tensor prints it; kernels print the same text:
kernel/instr/printtensor.py builds it with ``tensor_text``). cutelab.tensor re-exports every name here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import int_tuple as it
from .errors import TensorError
from .tensor_ssa import _is_ssa, _to_real

# ``Tensor`` in the annotations below is cutelab.tensor.Tensor, not imported: cutelab.tensor imports this
# module (annotations are not evaluated here)


# --------------------------------------------------------------------------- printing
# CuTe DSL's print_tensor: 'tensor(<pointer> o <layout>, data=' then the values as nested rows
# (mode 0 down, mode 1 across, the other modes as blocks in column-major order); every value is
# C's '% f' or '% d' (a space where the sign would be) followed by ', '; more than 6 rows or
# columns show the first 3, '...' and the last 3. verbose=True lists '(coord)= value' per element.

_INDENT = " " * len("tensor(")


def _dsl_value(v: Any) -> str:
    """One value as CuTe DSL's print_tensor writes it: ' 1.500000', '-2', ' (0,1)'."""
    if isinstance(v, tuple):
        return " " + it.tuple_str(v)
    if isinstance(v, (bool, np.bool_, int, np.integer)):
        return f"{int(v): d}"
    return "nan" if v != v else f"{float(v): f}"  # CuTe DSL writes NaN with no sign space ('inf' has one)


def _elide(items: list) -> list:
    return items[:3] + [None] + items[-3:] if len(items) > 6 else items


def _row_text(values: list) -> list:
    out: list = ["["]
    for v in _elide(values):
        out += ["..., "] if v is None else [v, ", "]
    return out + ["]"]


def _rows_text(rows: list, indent: str) -> list:
    out: list = []
    shown = _elide(rows)
    for k, r in enumerate(shown):
        out += ["..."] if r is None else r
        if k + 1 < len(shown):
            out.append(("\n" if r is None else ",\n") + indent)
    return out


def _tensor_values(t: Tensor) -> list:
    """The tensor's values in index order (column-major over its shape), as Python scalars or coordinates."""
    vals = t.load()
    if _is_ssa(vals):
        return _to_real(vals.values, vals.dtype).reshape(-1).tolist()
    return list(vals)


def tensor_text(head: str, flat: list, shape: Any, verbose: bool = False) -> list:
    """CuTe DSL's print_tensor text as pieces: head ('tensor(<pointer> o <layout>, data='), then the
    values as nested rows (see the comment above); flat holds the values, each already formatted
    (a str) or an item the caller formats (a kernel's printf part). Strings and items, in order."""
    if verbose:
        out: list = [head + " (\n"]
        for i, v in enumerate(flat):
            out += [f"\t{it.tuple_str(it.idx2crd(i, shape))}=", v, "\n"]
        return out + [")"]
    dims = it.product_each(shape)
    dims = dims if isinstance(dims, tuple) else (dims,)
    if len(dims) == 1:
        body = _rows_text([["[", v, ", ]"] for v in flat], _INDENT)
    else:
        m, n = dims[0], dims[1]
        blocks = [[_row_text([flat[r + m * c + m * n * b] for c in range(n)]) for r in range(m)]
                  for b in range(it.product(dims[2:]) if len(dims) > 2 else 1)]
        if len(dims) == 2:
            body = ["["] + _rows_text(blocks[0], _INDENT + " ") + ["]"]
        else:
            body = ["["]
            for k, rows in enumerate(blocks):
                if k:
                    body.append(",\n\n" + _INDENT + " ")
                body += ["["] + _rows_text(rows, _INDENT + "  ") + ["]"]
            body.append("]")
    return [head + "\n" + _INDENT] + body + [")"]


def format_tensor(t: Tensor, verbose: bool = False) -> str:
    """What CuTe DSL's print_tensor prints for t (see the comment above).

    >>> import numpy as np, cutelab as cute
    >>> t = cute.make_tensor(np.arange(6, dtype=np.float32), cute.make_layout((2, 3), stride=(3, 1)))
    >>> print(format_tensor(t).split("data=")[1])
    <BLANKLINE>
           [[ 0.000000,  1.000000,  2.000000, ],
            [ 3.000000,  4.000000,  5.000000, ]])
    """
    if t.batch:
        raise TensorError(f"print_tensor: {t} is a batch of {t.batch} tensors (one per thread); index one first")
    head = f"tensor({t.engine.raw_ptr_str(t.offset)} o {t.layout}, data="
    values = _tensor_values(t)
    if getattr(t.engine, "dtype", None) is not None and t.engine.dtype.kind == "bool":
        # CuTe DSL prints Booleans as the bytes holding them: i8, and a true in registers (an i1
        # sign-extended) as -1, one in memory (a byte 1, as numpy and torch store it) as 1
        head = head.replace(f": {t.engine.dtype.name},", ": i8,", 1)
        true = -1 if t.engine.memspace == "rmem" else 1
        values = [true if v else 0 for v in values]
    return "".join(tensor_text(head, [_dsl_value(v) for v in values], t.layout.shape, verbose))
