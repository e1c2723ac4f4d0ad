"""cute.compile with arguments by name, and the compiled function called with them by name, as
CUTLASS's all-gather GEMM does (``cute.compile(gemm, a, b, c, clusters, stream, flag_offset=k,
gate_a_flags=t)``, then ``compiled(a, b, c, stream, gate_a_flags=t)``): a named argument takes its
parameter's place (Constexpr ones left out of the call), each call runs on the tensors it passes."""
import numpy as np
import pytest

import cutelab as cute
from cutelab.runtime import from_dlpack


@cute.kernel
def _add(x: cute.Tensor, o: cute.Tensor, flags: cute.Tensor, k: cute.Constexpr):
    t, _, _ = cute.arch.thread_idx()
    o[t] = x[t] + flags[k]


class _Op:
    @cute.jit
    def __call__(self, x: cute.Tensor, o: cute.Tensor, offset: cute.Constexpr, flags: cute.Tensor,
                 scale: cute.Constexpr = 1):
        _add(x, o, flags, offset * scale).launch(grid=[1, 1, 1], block=[8, 1, 1])


def _arrays(v):
    return np.arange(8, dtype=np.float32), np.zeros(8, np.float32), np.array([v, v + 1, v + 2], np.float32)


def test_by_name_at_compile_and_at_call():
    x, o, f = _arrays(10)
    cf = cute.compile(_Op(), from_dlpack(x), from_dlpack(o), offset=2, flags=from_dlpack(f))
    cf(from_dlpack(x), from_dlpack(o), from_dlpack(f))  # by position: the Constexpr left out
    np.testing.assert_array_equal(o, x + 12)
    x2, o2, f2 = _arrays(100)
    cf(from_dlpack(x2), from_dlpack(o2), flags=from_dlpack(f2))  # by name: a tensor of this call
    np.testing.assert_array_equal(o2, x2 + 102)
    cf(x=from_dlpack(x2), o=from_dlpack(o), flags=from_dlpack(f))
    np.testing.assert_array_equal(o, x2 + 12)


def test_a_default_before_a_named_argument():
    x, o, f = _arrays(0)
    cf = cute.compile(_Op(), from_dlpack(x), from_dlpack(o), 1, from_dlpack(f), scale=2)
    cf(from_dlpack(x), from_dlpack(o), flags=from_dlpack(f))
    np.testing.assert_array_equal(o, x + 2)


def test_refusals():
    x, o, f = _arrays(0)
    cf = cute.compile(_Op(), from_dlpack(x), from_dlpack(o), offset=0, flags=from_dlpack(f))
    with pytest.raises(TypeError, match="no argument named 'flag'.*x, o, flags"):
        cf(from_dlpack(x), from_dlpack(o), flag=from_dlpack(f))
    with pytest.raises(TypeError, match="'o' is given by position and by name"):
        cf(from_dlpack(x), from_dlpack(o), o=from_dlpack(o), flags=from_dlpack(f))
    with pytest.raises(TypeError, match=r"the arguments \['o'\] are missing"):
        cf(from_dlpack(x), flags=from_dlpack(f))
