"""The import hook: cutlass.* is cutelab under `cutelab run` / install(), and only then."""
import pytest

from compat_helpers import SRC, ok, run  # noqa: F401


@pytest.fixture
def fake_dsl(tmp_path):
    """A stand-in for an installed nvidia-cutlass-dsl: a package `cutlass` on the path."""
    d = tmp_path / "site"
    (d / "cutlass" / "cute").mkdir(parents=True)
    (d / "cutlass" / "__init__.py").write_text("WHO = 'installed nvidia-cutlass-dsl'\n")
    (d / "cutlass" / "cute" / "__init__.py").write_text("WHO = 'installed cute'\n")
    return d


def test_plain_import_cutlass_is_unaffected(tmp_path, fake_dsl):
    out = ok(run(tmp_path, """
        import cutelab, cutelab.compat, cutelab.kernel
        import cutlass, cutlass.cute
        print(cutlass.WHO, '|', cutlass.cute.WHO, '|', cutelab.compat.installed())
    """, cutelab_run=False, extra_path=[fake_dsl]))
    assert out.strip() == "installed nvidia-cutlass-dsl | installed cute | False"


def test_plain_import_without_any_cutlass_fails(tmp_path):
    p = run(tmp_path, "import cutelab.compat\nimport cutlass\n", cutelab_run=False)
    assert p.returncode != 0 and "No module named 'cutlass'" in p.stderr


def test_cutelab_run_wins_over_installed_dsl(tmp_path, fake_dsl):
    out = ok(run(tmp_path, """
        import sys
        import cutlass
        import cutlass.cute as cute
        from cutlass.cute.nvgpu import warp
        import cutlass.utils as utils
        import cutlass.torch as cutlass_torch
        from cutlass.cute.runtime import from_dlpack, make_fake_stream
        print(getattr(cutlass, 'WHO', 'cutelab'), cute.make_layout((4, 8), stride=(8, 1)), cute.size((2, 3)))
        print(cutlass.Float32 is cute.Float32, warp.__name__, utils.SmemAllocator.__module__, sys.argv[1:])
        print(cute.arch.WARP_SIZE, cutlass.CUDA_VERSION.major >= 12, cutlass.select_(False, 1, 2))
    """, "--flag", "7", extra_path=[fake_dsl]))
    lines = out.splitlines()
    assert lines[0] == "cutelab (4,8):(8,1) 6"
    assert lines[1] == "True cutelab.nvgpu.warp cutelab.utils.smem_allocator ['--flag', '7']"
    assert lines[2] == "32 True 2"


def test_install_for_notebooks(tmp_path, fake_dsl):
    out = ok(run(tmp_path, """
        import cutlass                       # the installed package, imported before install()
        print(cutlass.WHO)
        import cutelab.compat
        cutelab.compat.install()
        import cutlass
        import cutlass.cute as cute
        print(cute.composition(cute.make_layout((4, 4), stride=(4, 1)), cute.make_layout(4, stride=2)))
        cutelab.compat.uninstall()
        import cutlass
        print(cutlass.WHO)
    """, cutelab_run=False, extra_path=[fake_dsl]))
    assert out.splitlines() == ["installed nvidia-cutlass-dsl", "(2,2):(8,1)", "installed nvidia-cutlass-dsl"]


def test_unknown_cutlass_module_names_itself_and_the_line(tmp_path):
    p = run(tmp_path, "import cutlass\nimport cutlass.no_such_thing\n")
    assert p.returncode != 0
    assert "No module named 'cutlass.no_such_thing'" in p.stderr and "prog.py:2" in p.stderr


def test_unknown_attribute_names_itself_and_the_line(tmp_path):
    p = run(tmp_path, "import cutlass.cute as cute\n\ncute.no_such_name\n")
    assert p.returncode != 0
    assert "'cutlass.cute' has no attribute 'no_such_name'" in p.stderr and "prog.py:3" in p.stderr


def test_run_module_form_runs_pytest(tmp_path):
    (tmp_path / "test_lib.py").write_text(
        "import cutlass\nimport cutlass.cute as cute\nimport torch\n\n"
        "def test_layout():\n    assert cute.size(cute.make_layout((3, 5))) == 15\n\n"
        "def test_cuda():\n    assert torch.cuda.is_available() and torch.ones(2, device='cuda').is_cuda\n")
    p = run(tmp_path, "", "-q", "-p", "no:cacheprovider", "test_lib.py", module="pytest")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "2 passed" in p.stdout


def test_run_usage_errors(tmp_path):
    p = run(tmp_path, "", module=None, cutelab_run=True)
    assert p.returncode == 0
    import subprocess
    import sys
    import os
    env = dict(os.environ, PYTHONPATH=SRC)
    q = subprocess.run([sys.executable, "-m", "cutelab", "run", "missing.py"], cwd=str(tmp_path), env=env,
                       capture_output=True, text=True)
    assert q.returncode == 2 and "no such program 'missing.py'" in q.stderr


def test_exit_status_passes_through(tmp_path):
    p = run(tmp_path, "import sys\nsys.exit(3)\n")
    assert p.returncode == 3


def test_real_nvshmem_multicast_is_refused_on_a_gpu(tmp_path):
    """On a GPU the real nvshmem.core is imported (not emulated), and its multicast functions are
    replaced by ones that refuse with the reason and the caller's line; the rest is untouched."""
    d = tmp_path / "site"
    (d / "nvshmem").mkdir(parents=True)
    (d / "nvshmem" / "__init__.py").write_text("")
    (d / "nvshmem" / "core.py").write_text(
        "WHO = 'real nvshmem'\n"
        "def get_multicast_tensor(team, t):\n    return 'made a multicast tensor'\n"
        "def get_peer_tensor(t, pe):\n    return ('peer', pe)\n")
    out = ok(run(tmp_path, """
        import cutelab.compat
        cutelab.compat.install(emulate_cuda=False)
        import nvshmem.core as nv
        print(nv.WHO, nv.get_peer_tensor(None, 1))
        try:
            nv.get_multicast_tensor(None, None)
        except NotImplementedError as e:
            print(type(e).__name__, '|', e)
    """, cutelab_run=False, extra_path=[d]))
    lines = out.splitlines()
    assert lines[0] == "real nvshmem ('peer', 1)"
    assert lines[1].startswith("NotSupportedError | nvshmem.core.get_multicast_tensor is not supported by cutelab (")
    assert "NVLink multicast" in lines[1] and "prog.py" in lines[1] or ".py:" in lines[1]
