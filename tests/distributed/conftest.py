# programs/ holds CuTe DSL programs run as ranks (they import cutlass and torch.distributed):
# pytest must not import them itself.
import os
import sys

collect_ignore_glob = ["programs/*.py"]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def pytest_collection_modifyitems(config, items):
    """`@pytest.mark.gpu` tests run only where torch sees an NVIDIA GPU (as in tests/kernel)."""
    import pytest

    try:
        import torch

        if torch.cuda.is_available():
            return
    except ImportError:
        pass
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU (torch.cuda.is_available() is False)")
    for item in items:
        if "gpu" in item.keywords and str(item.fspath).startswith(os.path.dirname(os.path.abspath(__file__))):
            item.add_marker(skip)
