"""PipelineTmaUmma.create(enable_multicast_signaling=True) (CUTLASS's all-gather GEMM): the consumer
group names the warps that release a stage, and each empty barrier counts one arrive per such warp
per multicast partner of the cluster, as CuTe DSL 4.8.1 computes it (pipeline/sm100.py). The GEMM
that uses it runs in tests/distributed (test_cutlass_all_gather_gemm)."""
import pytest

import cutelab as cute
from cutelab.errors import TraceError
from cutelab.pipeline_sm100 import _signaling_group
from cutelab.pipeline_sm90 import Agent, CooperativeGroup


def _vmnk(v, m, n):
    return cute.make_layout((v, m, n, 1))


@pytest.mark.parametrize("v, m, n, mode, warps, want", [
    (1, 1, 1, (1, 1), 1, 1),  # no cluster: the CTA itself
    (1, 2, 1, (1, 1), 1, 2),  # B multicast along M to 2 CTAs, A to 1, the CTA counted once
    (1, 2, 2, (1, 1), 1, 3),
    (1, 2, 4, (1, 0), 1, 4),  # A only: the CTAs of this row (N extent)
    (1, 4, 2, (0, 1), 2, 8),  # B only: the CTAs of this column (M extent), 2 warps each
    (2, 2, 1, (1, 1), 1, 2),
])
def test_arrive_count(v, m, n, mode, warps, want):
    g = _signaling_group(CooperativeGroup(Agent.Warp, warps), _vmnk(v, m, n), mode)
    assert (g.agent, g.size) == (Agent.Thread, want)
    g = _signaling_group(CooperativeGroup(Agent.Thread, 32 * warps), _vmnk(v, m, n), mode)
    assert g.size == want


def test_refusals():
    with pytest.raises(TraceError, match="must be whole warps"):
        _signaling_group(CooperativeGroup(Agent.Thread, 33), _vmnk(1, 1, 1), (1, 1))
    with pytest.raises(TraceError, match="multicasts in neither mode"):
        _signaling_group(CooperativeGroup(Agent.Warp, 1), _vmnk(1, 2, 1), (0, 0))
