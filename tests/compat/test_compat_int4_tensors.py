"""Int4 tensors as CuTe DSL 4.8.1 makes them: ``cutlass.torch.cute_tensor_like(ref, cutlass.Int4, ...)`` packs
two values a byte (the even element in the low nibble) into byte storage of ref's shape and strides and returns
it as torch.int4; ``t.element_type = cutlass.Int4`` over a byte (or wider) tensor reads its first bytes as packed
4-bit elements with the same layout. cutelab's Int4 memory is read-only on the CPU and refused by name where it
is not supported: never a wider type in its place."""

import numpy as np
import pytest

import cutelab as cute
from cutelab.errors import TensorError
from cutelab.numeric import Int4, Int8

torch = pytest.importorskip("torch")


def _values(t):
    return [int(t.engine.data[t.offset + t.layout(c)]) for c in np.ndindex(*t.shape)]


def test_cute_tensor_like_int4_packs_two_values_a_byte():
    from cutelab.compat.dsl_torch import cute_tensor_like

    ref = torch.tensor([[0.0, 1, -1, 7], [-8, 3, -4, 2]])
    t, storage = cute_tensor_like(ref, Int4, is_dynamic_layout=False)
    assert t.element_type is Int4 and storage.dtype == torch.int4
    assert tuple(storage.shape) == (2, 4) and tuple(storage.stride()) == (4, 1)
    raw = storage.view(torch.uint8).reshape(-1).tolist()
    # elements 0..7 in the nibbles of bytes 0..3 (low nibble first); the storage's other half unused
    assert raw[:4] == [0x10, 0x7F, 0x38, 0x2C] and raw[4:] == [0, 0, 0, 0]
    assert _values(t) == [0, 1, -1, 7, -8, 3, -4, 2]


def test_cute_tensor_like_int4_refuses_values_it_cannot_hold():
    from cutelab.compat.dsl_torch import cute_tensor_like

    with pytest.raises(ValueError, match=r"Int4.*not integers in \[-8, 7\].*8\.0"):
        cute_tensor_like(torch.tensor([1.0, 8.0]), Int4, is_dynamic_layout=False)
    with pytest.raises(ValueError, match="Int4"):
        cute_tensor_like(torch.tensor([0.5]), Int4, is_dynamic_layout=False)


def test_element_type_int4_over_bytes_and_torch_int4():
    from cutelab.compat.dsl_torch import cute_tensor_like
    from cutelab.runtime import from_dlpack

    ref = torch.tensor([[-8.0, 7, 0, 5], [1, -2, 3, -3]]).t()  # (4, 2), column-major strides (1, 4)
    _, storage = cute_tensor_like(ref, Int4, is_dynamic_layout=True)
    # from_dlpack of torch.int4 gives Int8 over the bytes, as CuTe DSL's; retyping packs them
    x = from_dlpack(storage, assumed_align=16)
    assert x.element_type is Int8
    x.element_type = Int4
    assert x.element_type is Int4 and str(x.layout) == "(4,2):(1,4)"
    assert _values(x) == [int(v) for v in ref.reshape(-1)]
    # over a uint8 tensor of the same bytes, and a one-element offset counts two nibbles
    raw = storage.view(torch.uint8)
    y = from_dlpack(raw, assumed_align=1)
    y.element_type = Int4
    assert _values(y) == _values(x)
    z = from_dlpack(torch.as_strided(raw, (7,), (1,), 1), assumed_align=1)  # from byte 1 on
    z.element_type = Int4
    assert [int(z.engine.data[z.offset + i]) for i in range(2)] == [0, 5]


def test_int4_memory_is_read_only_by_name():
    from cutelab.compat.dsl_torch import cute_tensor_like

    t, _ = cute_tensor_like(torch.zeros(4), Int4, is_dynamic_layout=False)
    with pytest.raises(TensorError, match="4-bit elements.*not supported"):
        t[0] = 1
