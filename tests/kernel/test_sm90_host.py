"""The SM90 GEMM's host path on a pretend GPU (cutelab.kernel.cuda.fakegpu): cute.compile traces it once;
a compiled call, and a remembered @cute.jit call, launch with the TMA tensor maps of the tensors'
addresses, encoded once per (descriptor, address), not at every call."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

import cutelab as cute
from cutelab.kernel.cuda.fakegpu import FakeDeviceArray, fake_gpu, fake_tensor_map
from cutelab.runtime import from_dlpack

_EX = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "gemm", "sm90_gemm.py")


def _example():
    spec = importlib.util.spec_from_file_location("sm90_gemm_example", _EX)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _dev(shape, dtype):
    return FakeDeviceArray(np.zeros(shape, dtype))


def _addr(x):
    return x.__cuda_array_interface__["data"][0]


def _words(raw):
    return np.frombuffer(raw, np.uint64).tolist()


def _expected_map(arr, box, swizzle=3):
    """What FakeDriver's cuTensorMapEncodeTiled answers for a row-major f16 (M, K) array, K innermost."""
    M, K = arr.array.shape
    return fake_tensor_map(6, 2, _addr(arr), (K, M), (K * 2,), box, (1, 1), 0, swizzle, 2, 0)


@pytest.mark.parametrize("ws", [False, True])
def test_compiled_gemm_encodes_tensor_maps_once_per_address(ws):
    ex = _example()
    with fake_gpu() as g:
        A, B, C = _dev((256, 128), np.float16), _dev((128, 128), np.float16), _dev((256, 128), np.float32)
        mA, mB, mC = (from_dlpack(x, assumed_align=16) for x in (A, B, C))
        gemm = ex.HopperGemm(tile_mnk=(128, 128, 64), stages=2, num_ctas=2, dynamic=True, warp_specialized=ws,
                             mma_warpgroups=1)
        traced = []
        make_atoms = gemm.make_atoms
        gemm.make_atoms = lambda *a: traced.append(1) or make_atoms(*a)  # runs once per trace of __call__
        f = cute.compile(gemm, mA, mB, mC)
        assert len(traced) == 1
        for _ in range(3):
            f(mA, mB, mC)
        assert len(traced) == 1 and len(g.launches) == 3
        assert g.driver.calls["cuTensorMapEncodeTiled"] == 2  # A's and B's, at the first call only
        last = g.launches[-1]
        assert last["grid"] == (2, 1, 1) and last["block"] == (256 if ws else 128, 1, 1)
        assert _words(last["tensor_maps"]["tmap_mA"]) == _expected_map(A, (64, 128))
        assert _words(last["tensor_maps"]["tmap_mB"]) == _expected_map(B, (64, 128))
        assert last["params"][:3] == [_addr(A), _addr(B), _addr(C)]  # the pointers, then the maps
        # a new A: its map alone is encoded again, and the launch carries it
        A2 = _dev((256, 128), np.float16)
        f(from_dlpack(A2, assumed_align=16), mB, mC)
        assert g.driver.calls["cuTensorMapEncodeTiled"] == 3
        assert _words(g.launches[-1]["tensor_maps"]["tmap_mA"]) == _expected_map(A2, (64, 128))
        f(mA, mB, mC)  # back to the first A: its map was encoded before
        assert g.driver.calls["cuTensorMapEncodeTiled"] == 3
        assert _words(g.launches[-1]["tensor_maps"]["tmap_mA"]) == _expected_map(A, (64, 128))
        # the @cute.jit call: traced again (its own record), then remembered and replayed
        gemm(mA, mB, mC)
        gemm(mA, mB, mC)
        gemm(mA, mB, mC)
        assert len(traced) == 2 and len(g.launches) == 8
        assert _words(g.launches[-1]["tensor_maps"]["tmap_mB"]) == _expected_map(B, (64, 128))
        assert g.nvrtc is not None and g.driver.calls["cuModuleLoadData"] == 1  # one kernel, compiled once


def test_compiled_gemm_refuses_other_tensors():
    ex = _example()
    with fake_gpu():
        A, B, C = _dev((128, 128), np.float16), _dev((128, 128), np.float16), _dev((128, 128), np.float32)
        mA, mB, mC = (from_dlpack(x, assumed_align=16) for x in (A, B, C))
        f = cute.compile(ex.HopperGemm(num_ctas=2, dynamic=True), mA, mB, mC)
        bigger = from_dlpack(_dev((256, 128), np.float16), assumed_align=16)
        with pytest.raises(cute.LaunchError, match="layout|shape"):
            f(bigger, mB, mC)


def test_gemm_refuses_the_wrong_element_type():
    ex = _example()
    A = np.zeros((128, 128), np.float16)
    C = np.zeros((128, 128), np.float32)
    with pytest.raises(ValueError, match="made for BFloat16"):
        ex.HopperGemm(ab_dtype=cute.BFloat16, num_ctas=2)(A, A, C)


def test_gpu_launch_path_of_the_recommended_configuration_compiles():
    """128x256x64 tiles, a producer and two consumer warpgroups, 4 stages, f16 C stored during the next
    tile: the source the GPU launch path prints (with its guarded accesses) compiles for sm_90a, and
    the launch asks for the 4 stages' shared memory."""
    from cutelab.kernel.launch.plan import last_launch

    from sm90_util import nvcc_compiles

    ex = _example()
    with fake_gpu() as g:
        A, B = _dev((512, 128), np.float16), _dev((512, 128), np.float16)
        C = _dev((512, 512), np.float16)
        mA, mB, mC = (from_dlpack(x, assumed_align=16) for x in (A, B, C))
        gemm = ex.HopperGemm(tile_mnk=(128, 256, 64), stages=4, num_ctas=3, dynamic=True, warp_specialized=True,
                             mma_warpgroups=2)
        f = cute.compile(gemm, mA, mB, mC)
        f(mA, mB, mC)
        src = last_launch().source
        assert g.launches[-1]["smem"] == 1024 + 4 * (128 + 256) * 64 * 2 and g.launches[-1]["block"] == (384, 1, 1)
    assert "setmaxnreg.inc.sync.aligned.u32 232" in src and "cl_f32_to_f16" in src
    nvcc_compiles(src)
