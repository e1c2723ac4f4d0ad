"""Kernel tests: `@pytest.mark.gpu` tests run only where torch sees an NVIDIA GPU."""

import pytest


def _has_gpu() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    if _has_gpu():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU (torch.cuda.is_available() is False)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _default_codegen(monkeypatch, request):
    """Tests of the CUDA printer see cutelab's defaults, whatever CUTELAB_CUDA_* the shell sets."""
    if request.node.module.__name__.endswith("test_cuda"):
        for k in ("CUTELAB_CUDA_LOAD", "CUTELAB_CUDA_STORE", "CUTELAB_CUDA_COARSEN", "CUTELAB_CUDA_REMAP",
                  "CUTELAB_CUDA_PAIR", "CUTELAB_CUDA_RETILE", "CUTELAB_PASSES_OFF"):
            monkeypatch.delenv(k, raising=False)
