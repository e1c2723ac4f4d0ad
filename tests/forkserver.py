"""`python -m cutelab run ...` in the test suite, without paying for `import torch` each time.

Some 500 tests run a CuTe DSL program in a subprocess, as `cutelab run` (a fresh process per program, its own
argv, environment and working directory). Of each such process's ~1.9 CPU seconds of start-up, 1.7 are
`import torch` (benchmarks/RESULTS.md, "CI's subprocess start-up"), about half of CI's time in all.

A fork server imports torch and numpy once, then forks a child per run: the child takes the run's working
directory, environment, argv and output files, and runs `cutelab` as `python -m cutelab` would (runpy, as
__main__), so each program still has a process of its own; cutelab itself is imported in the child, under the
run's environment. What a forked child cannot change is what the interpreter fixed at its start: the
PYTHON* variables (hash seed, path, flags). Servers are therefore kept per set of PYTHON* variables (most tests
share one or two), and only commands of the exact form ``[sys.executable, "-m", "cutelab", "run", ...]`` with
captured output are served; anything else goes to ``subprocess.run`` as before. CUTELAB_TEST_FORKSERVER=0 turns
it off.
"""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
import tempfile
import threading
from typing import Any, Dict, Tuple

_SERVER = r'''
import json, os, struct, sys
import numpy, torch  # noqa: F401  (the start-up the children share)

def reply(obj):
    data = json.dumps(obj).encode()
    sys.__stdout__.buffer.write(struct.pack("<I", len(data)) + data)
    sys.__stdout__.buffer.flush()

inp = sys.stdin.buffer
while True:
    head = inp.read(4)
    if len(head) < 4:
        break
    req = json.loads(inp.read(struct.unpack("<I", head)[0]))
    pid = os.fork()
    if pid == 0:  # the run: its own process, as `python -m cutelab ARGS` in cwd with env
        code = 0
        try:
            os.setsid()
            out = os.open(req["out"], os.O_WRONLY | os.O_TRUNC)
            err = os.open(req["err"], os.O_WRONLY | os.O_TRUNC)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0); os.dup2(out, 1); os.dup2(err, 2)
            os.chdir(req["cwd"])
            os.environ.clear(); os.environ.update(req["env"])
            sys.argv = ["-m"] + req["args"]
            sys.path[0] = os.getcwd()  # as `python -m` puts the working directory first
            import runpy
            runpy.run_module("cutelab", run_name="__main__", alter_sys=True)
        except SystemExit as e:
            c = e.code
            code = 0 if c is None else c if isinstance(c, int) else 1
            if not isinstance(c, (int, type(None))):
                print(c, file=sys.stderr)
        except BaseException:
            import traceback
            traceback.print_exc()
            code = 1
        try:
            import atexit
            atexit._run_exitfuncs()
        except BaseException:
            pass
        for f in (sys.stdout, sys.stderr):
            try:
                f.flush()
            except BaseException:
                pass
        os._exit(code & 0xFF)
    reply({"pid": pid})
    _, status = os.waitpid(pid, 0)
    reply({"status": status})
'''


class _Server:
    def __init__(self, env: Dict[str, str]):
        self.proc = subprocess.Popen([sys.executable, "-c", _SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env)
        self.lock = threading.Lock()

    def _read(self) -> Any:
        head = self.proc.stdout.read(4)
        if len(head) < 4:
            raise RuntimeError("the fork server ended")
        return json.loads(self.proc.stdout.read(struct.unpack("<I", head)[0]))

    def run(self, args: list, cwd: str, env: Dict[str, str], timeout: Any) -> Tuple[int, bytes, bytes]:
        with tempfile.TemporaryDirectory() as tmp:
            out, err = os.path.join(tmp, "out"), os.path.join(tmp, "err")
            for p in (out, err):
                open(p, "wb").close()
            data = json.dumps({"args": args, "cwd": cwd, "env": env, "out": out, "err": err}).encode()
            with self.lock:
                self.proc.stdin.write(struct.pack("<I", len(data)) + data)
                self.proc.stdin.flush()
                pid = self._read()["pid"]
                timer = None
                if timeout is not None:
                    timer = threading.Timer(timeout, lambda: _kill(pid))
                    timer.start()
                try:
                    status = self._read()["status"]
                finally:
                    if timer is not None:
                        timer.cancel()
            with open(out, "rb") as f:
                o = f.read()
            with open(err, "rb") as f:
                e = f.read()
        if timer is not None and timer.finished.is_set() and os.WIFSIGNALED(status) \
                and os.WTERMSIG(status) == signal.SIGKILL:
            raise subprocess.TimeoutExpired([sys.executable, "-m", "cutelab", *args], timeout, o, e)
        rc = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)
        return rc, o, e

    def close(self) -> None:
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except Exception:  # noqa: BLE001
            self.proc.kill()


def _kill(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)  # the run and anything it started (it is its own session's leader)
    except ProcessLookupError:
        pass


_servers: Dict[Tuple[Tuple[str, str], ...], _Server] = {}
_real_run = subprocess.run


def _served(cmd: Any, kwargs: Dict[str, Any]) -> bool:
    if not isinstance(cmd, (list, tuple)) or len(cmd) < 4 or list(cmd[:4]) != [sys.executable, "-m", "cutelab", "run"]:
        return False
    if not all(isinstance(c, str) for c in cmd):
        return False
    allowed = {"cwd", "env", "capture_output", "text", "timeout", "check", "encoding", "errors"}
    if set(kwargs) - allowed or not kwargs.get("capture_output"):
        return False
    return True


def run(cmd: Any, *a: Any, **kwargs: Any) -> Any:
    """subprocess.run, with `[sys.executable, "-m", "cutelab", "run", ...]` and captured output served by a fork
    server (the module docstring); every other call goes to subprocess.run."""
    if a or not _served(cmd, kwargs):
        return _real_run(cmd, *a, **kwargs)
    env = dict(os.environ if kwargs.get("env") is None else kwargs["env"])
    key = tuple(sorted((k, v) for k, v in env.items() if k.startswith("PYTHON")))
    srv = _servers.get(key)
    if srv is None or srv.proc.poll() is not None:
        srv = _servers[key] = _Server({k: v for k, v in os.environ.items() if not k.startswith("PYTHON")} | dict(key))
    cwd = os.path.abspath(str(kwargs.get("cwd") or os.getcwd()))
    rc, o, e = srv.run([str(c) for c in cmd[3:]], cwd, env, kwargs.get("timeout"))
    if kwargs.get("text") or kwargs.get("encoding") or kwargs.get("errors"):
        enc, errs = kwargs.get("encoding") or "utf-8", kwargs.get("errors") or "strict"
        o, e = o.decode(enc, errs), e.decode(enc, errs)
    res = subprocess.CompletedProcess(list(cmd), rc, o, e)
    if kwargs.get("check"):
        res.check_returncode()
    return res


def install() -> None:
    """Serve the suite's `cutelab run` subprocesses (tests/conftest.py), unless CUTELAB_TEST_FORKSERVER=0."""
    if os.environ.get("CUTELAB_TEST_FORKSERVER", "1") in ("0", "") or not hasattr(os, "fork"):
        return
    subprocess.run = run


def shutdown() -> None:
    for s in _servers.values():
        s.close()
    _servers.clear()
    subprocess.run = _real_run
