"""cutlass.while_generate / yield_out: a runtime while loop built by hand (kernel.frontend.while_region), as
CUTLASS's Lamport all-reduce GEMM polls its peers' data; on the CPU and as CUDA."""
import numpy as np
import pytest

import cutelab as cute
import cutelab as cutlass
from cutelab import while_generate, yield_out
from cutelab.errors import TraceError
from cutelab.runtime import from_dlpack


@cute.kernel
def triangle(n: cute.Tensor, out: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    limit = n[tidx]
    spin = while_generate([cutlass.Int32(0), cutlass.Int32(0)], lambda i, s: i < limit)
    with spin as (i, s):
        yield_out([i + 1, s + i])
        out[tidx, 2] = i  # the iteration's own value, read after its yield_out
    i, s = spin.results
    out[tidx, 0] = i
    out[tidx, 1] = s


def test_while_generate_loops_per_thread():
    n = np.arange(32, dtype=np.int32) % 7
    out = np.full((32, 3), -1, np.int32)
    triangle(from_dlpack(n), from_dlpack(out)).launch(grid=(1, 1, 1), block=(32, 1, 1))
    assert out[:, 0].tolist() == n.tolist()
    assert out[:, 1].tolist() == (n * (n - 1) // 2).tolist()
    assert out[:, 2].tolist() == np.where(n > 0, n - 1, -1).tolist()  # the last iteration's i (none: untouched)
    from cutelab.kernel.cuda.fakegpu import FakeDeviceArray, fake_gpu
    from cutelab.kernel.launch.plan import last_launch

    with fake_gpu():
        triangle(from_dlpack(FakeDeviceArray(n)), from_dlpack(FakeDeviceArray(out))).launch(grid=(1, 1, 1),
                                                                                            block=(32, 1, 1))
        assert "while (" in last_launch().source


def test_while_generate_refusals():
    @cute.kernel
    def no_yield(out: cute.Tensor):
        spin = while_generate([cutlass.Int32(0)], lambda i: i < 3)
        with spin:
            pass
        out[0] = spin.results[0]

    with pytest.raises(TraceError, match=r"the body of cutlass.while_generate must end with yield_out\(...\) of the "
                                         r"loop's 1 values"):
        no_yield(from_dlpack(np.zeros(1, np.int32))).launch(grid=(1, 1, 1), block=(1, 1, 1))

    @cute.kernel
    def too_many(out: cute.Tensor):
        spin = while_generate([cutlass.Int32(0)], lambda i: i < 3)
        with spin as (i,):
            yield_out([i + 1, i])
        out[0] = spin.results[0]

    with pytest.raises(TraceError, match=r"yield_out of 2 values in a while_generate loop of 1"):
        too_many(from_dlpack(np.zeros(1, np.int32))).launch(grid=(1, 1, 1), block=(1, 1, 1))
