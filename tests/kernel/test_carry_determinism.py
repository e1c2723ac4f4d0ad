"""The loop-carry machinery (kernel/frontend/carry.py) adds nothing to a kernel when it only describes a
value for an error that may never be raised. It did: the description of a pipeline state read its
registers, once per name of a set of strings, so the CUDA of CUTLASS's Blackwell fmha.py numbered its
registers differently under two PYTHONHASHSEEDs (and held reads nothing used)."""

from __future__ import annotations

import pytest

from cutelab.errors import TraceError
from cutelab.kernel.frontend.carry import Unusable


class _Noisy:
    seen = 0

    def __repr__(self) -> str:
        _Noisy.seen += 1  # a pipeline state's repr reads its registers: it must not run unless needed
        return "<noisy>"


def test_unusable_describes_its_value_only_when_used():
    u = Unusable("state", _Noisy(), "branch", "prog.py:7", "k")
    assert _Noisy.seen == 0
    with pytest.raises(TraceError, match=r"variable 'state' is <noisy> before the branch at prog.py:7"):
        u + 1
    assert _Noisy.seen == 1
