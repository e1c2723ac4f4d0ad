"""Run a program as N ranks for the tests, quickly: each rank is a child forked from a launcher process
(this file as a script, torch and cutelab already imported), with the environment torchrun gives a rank (RANK, WORLD_SIZE,
LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT), running ``cutelab run PROGRAM ARGS`` as the
command line would. One test (test_torchrun_cli) runs the real ``torchrun ... cutelab run``.

run_ranks returns one Result per rank: exit code, stdout, stderr. A rank still running after the
timeout is killed (and reported with code None): the tests assert on that, so a hang fails fast.
"""

import os
import signal
import socket
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "programs")


@dataclass
class Result:
    rank: int
    code: Optional[int]
    out: str
    err: str


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _child(rank: int, n: int, port: int, program: str, args: List[str], env: dict, out: str, err: str) -> None:
    code = 1
    try:
        fo = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        fe = os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(fo, 1)
        os.dup2(fe, 2)
        sys.stdout = open(1, "w", buffering=1, closefd=False)
        sys.stderr = open(2, "w", buffering=1, closefd=False)
        os.environ.update(env)
        os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(n), LOCAL_WORLD_SIZE=str(n),
                          GROUP_RANK="0", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                          TORCHELASTIC_USE_AGENT_STORE="True")  # the launcher holds the store, as torchrun's agent
        os.chdir(os.path.dirname(program))
        from cutelab.compat.run import main

        code = main([program, *args])
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:  # noqa: BLE001 - the rank's traceback goes to its stderr, as python prints it
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def run_ranks(program: str, n: int, args: List[str] = (), env: Optional[dict] = None, timeout: float = 60.0) -> List[Result]:
    """The ranks are forked by a launcher process of their own (this file run as a script), not by the
    test process: a pytest worker that earlier tests left with threads or hooks would hand them to
    the forked ranks (a lock held by another thread at the fork hangs the child)."""
    import json
    import subprocess

    program = os.path.join(PROGRAMS, program) if not os.path.isabs(program) else program
    tmp = tempfile.mkdtemp(prefix="cutelab-ranks-")
    spec = os.path.join(tmp, "spec.json")
    with open(spec, "w") as f:
        json.dump({"program": program, "n": n, "args": list(args), "env": env or {}, "timeout": timeout, "dir": tmp}, f)
    subprocess.run([sys.executable, os.path.abspath(__file__), spec], timeout=timeout + 120, check=True,
                   env=dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p)))
    with open(os.path.join(tmp, "codes.json")) as f:
        codes = json.load(f)
    results = []
    for r in range(n):
        out, err = os.path.join(tmp, f"out{r}"), os.path.join(tmp, f"err{r}")
        with open(out) as fo, open(err) as fe:
            results.append(Result(r, codes[r], fo.read(), fe.read()))
        os.unlink(out)
        os.unlink(err)
    os.unlink(spec)
    os.unlink(os.path.join(tmp, "codes.json"))
    os.rmdir(tmp)
    return results


def _launch(program: str, n: int, args: List[str], env: Optional[dict], timeout: float, tmp: str) -> List[Optional[int]]:
    """Fork the n ranks (from this launcher, with torch and cutelab imported), wait up to timeout; the exit codes."""
    import torch  # noqa: F401  (imported before forking: the ranks start with it loaded)
    import cutelab.compat  # noqa: F401

    port = _free_port()
    env = dict({"CUTE_DSL_ARCH": "sm_100a", "NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
                "NVSHMEM_DISABLE_NVLS": "1", "OMP_NUM_THREADS": "1"}, **(env or {}))
    pids = []
    for r in range(n):
        out, err = os.path.join(tmp, f"out{r}"), os.path.join(tmp, f"err{r}")
        pid = os.fork()
        if pid == 0:
            _child(r, n, port, program, list(args), env, out, err)
        pids.append(pid)
    # the rendezvous store lives in this launcher, as torchrun's agent keeps it (TORCHELASTIC_USE_AGENT_STORE): a rank
    # that stops early (a program's own "not supported" exit) takes no store down with it while another rank is still
    # setting up its process group (rank 0 hosting it reset the others' connections: "Connection reset by peer");
    # made after the forks, so that no rank inherits its server
    from datetime import timedelta

    from torch.distributed import TCPStore

    store = TCPStore("127.0.0.1", port, n, True, timedelta(seconds=timeout), wait_for_workers=False)
    codes: List[Optional[int]] = [None] * n
    end = time.monotonic() + timeout
    while time.monotonic() < end and any(c is None for c in codes):
        for i, pid in enumerate(pids):
            if codes[i] is None:
                got, status = os.waitpid(pid, os.WNOHANG)
                if got:
                    codes[i] = os.waitstatus_to_exitcode(status)
        time.sleep(0.05)
    for i, pid in enumerate(pids):
        if codes[i] is None:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    del store
    return codes


if __name__ == "__main__":
    import json

    with open(sys.argv[1]) as f:
        sp = json.load(f)
    got = _launch(sp["program"], sp["n"], sp["args"], sp["env"], sp["timeout"], sp["dir"])
    with open(os.path.join(sp["dir"], "codes.json"), "w") as f:
        json.dump(got, f)
