"""scripts/ci_setup.sh waits for a package lock held by another apt-get (a bounded wait) instead of
failing at once. Run against stub apt-get commands, on a PATH that has nothing else."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "ci_setup.sh"
TOOLS = ["bash", "mktemp", "grep", "cat", "rm", "sleep", "id", "env"]


def _bin(tmp_path: Path, locked_times: int) -> Path:
    b = tmp_path / "bin"
    b.mkdir()
    for t in TOOLS:
        p = shutil.which(t)
        if p is None:
            pytest.skip(f"no {t} here")
        (b / t).symlink_to(p)
    count = tmp_path / "count"
    count.write_text("0")
    (b / "apt-get").write_text(f"""#!{shutil.which('bash')}
n=$(cat {count}); n=$((n + 1)); echo $n > {count}
echo "apt-get $*" >> {tmp_path / 'calls'}
if [ "$n" -le {locked_times} ]; then
  echo "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (apt-get)" >&2
  exit 100
fi
exit 0
""")
    (b / "apt-get").chmod(0o755)
    return b


def _run(tmp_path: Path, locked_times: int, wait: int) -> subprocess.CompletedProcess:
    b = _bin(tmp_path, locked_times)
    env = {"PATH": str(b), "CI_APT_WAIT": str(wait), "CI_APT_POLL": "0.1", "HOME": str(tmp_path)}
    if os.geteuid() != 0:
        (b / "sudo").write_text(f"#!{shutil.which('bash')}\nexec \"$@\"\n")
        (b / "sudo").chmod(0o755)
    return subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60)


def test_waits_for_the_lock_then_installs(tmp_path):
    r = _run(tmp_path, locked_times=3, wait=30)
    assert r.returncode == 0, r.stderr
    assert "waiting" in r.stderr and "installed" in r.stdout
    calls = (tmp_path / "calls").read_text().splitlines()
    assert len(calls) == 5 and calls[-1].startswith("apt-get -o DPkg::Lock::Timeout=30 install")


def test_the_wait_is_bounded(tmp_path):
    r = _run(tmp_path, locked_times=10**6, wait=1)
    assert r.returncode != 0
    assert "gave up after waiting 1 s for the package lock" in r.stderr
