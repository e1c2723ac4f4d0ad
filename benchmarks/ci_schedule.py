"""How the suite's tests spread over CI's two xdist workers: per-test CPU seconds, then a replay of
xdist 3.8's two schedulers over them.

1. Record (a pytest plugin; each test's CPU seconds, its process and its waited-for children, setup to
   teardown, one JSON line per test in OUT_<worker>.jsonl):
       mkdir -p /tmp/cis && ln -sf $PWD/benchmarks/ci_schedule.py /tmp/cis/
       PYTHONPATH=src:/tmp/cis CI_SCHEDULE_OUT=/tmp/cpu python3 -m pytest -q -n 2 -p ci_schedule
   (the plugin's folder alone on the path: benchmarks/ holds a copy.py that would shadow the standard library's)
       python3 -m pytest -q --collect-only > /tmp/collect.txt
2. Replay (--dist load as xdist's LoadScheduling sends chunks, --dist worksteal as its
   WorkStealingScheduling splits and steals; each in the collection's order and in tests/conftest.py's):
       python3 benchmarks/ci_schedule.py /tmp/collect.txt /tmp/cpu_*.jsonl [--unmeasured 2.5]

CPU seconds stand for wall seconds on CI's otherwise idle 2 cores. A collected test with no record
takes its file's mean, else --unmeasured seconds in a tests/conftest.py SLOW_FIRST file, else 0.02.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import os
import resource
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _cpu():
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime, c.ru_utime + c.ru_stime


try:
    import pytest

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):  # the plugin: pytest -p ci_schedule
        w0, (s0, c0) = time.perf_counter(), _cpu()
        yield
        w1, (s1, c1) = time.perf_counter(), _cpu()
        out = os.environ.get("CI_SCHEDULE_OUT", "/tmp/ci_schedule")
        with open(f"{out}_{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.jsonl", "a") as f:
            f.write(json.dumps({"id": item.nodeid, "wall": w1 - w0, "self": s1 - s0, "child": c1 - c0}) + "\n")
except ImportError:  # replaying needs no pytest
    pass


def replay_load(d, n=2):
    """xdist's LoadScheduling: a first chunk of a quarter of each worker's share, then refills."""
    pending, q = list(range(len(d))), [[] for _ in range(n)]
    for i in range(n):
        k = max(len(d) // n // 4, 2)
        q[i], pending = pending[:k], pending[k:]
    t, done = [0.0] * n, [False] * n
    while not all(done):
        i = min((k for k in range(n) if not done[k]), key=lambda k: t[k])
        if not q[i]:
            if not pending:
                done[i] = True
                continue
            k = max(2, len(pending) // n // 2)
            q[i], pending = pending[:k], pending[k:]
        x = q[i].pop(0)
        t[i] += d[x]
        if pending:
            lo, hi = max(2, len(pending) // n // 4), max(2, len(pending) // n // 2)
            if len(q[i]) < lo and not (d[x] >= 0.1 and len(q[i]) >= 2):
                k = hi - len(q[i])
                q[i], pending = q[i] + pending[:k], pending[k:]
    return t


def replay_worksteal(d, n=2):
    """xdist's WorkStealingScheduling: contiguous parts; a worker with under 2 queued takes the back half
    of the longest queue."""
    q, start, left = [], 0, len(d)
    for i in range(n):
        size = left // (n - i)
        q.append(list(range(start, start + size)))
        start, left = start + size, left - size
    t, done = [0.0] * n, [False] * n
    while not all(done):
        i = min((k for k in range(n) if not done[k]), key=lambda k: t[k])
        if len(q[i]) < 2:
            src = max(range(n), key=lambda k: len(q[k]))
            m = min(len(q[src]) // 2, max(0, len(q[src]) - 2))
            if m > 0 and src != i:
                q[i], q[src] = q[i] + q[src][-m:], q[src][:-m]
        if not q[i]:
            done[i] = True
            continue
        t[i] += d[q[i].pop(0)]
    return t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("collect", help="pytest --collect-only -q output (one node id a line)")
    ap.add_argument("records", nargs="+", help="the plugin's JSON lines")
    ap.add_argument("--unmeasured", type=float, default=2.5)
    a = ap.parse_args()
    spec = importlib.util.spec_from_file_location("suite_conftest", os.path.join(ROOT, "tests", "conftest.py"))
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    order = [line.strip() for line in open(a.collect) if "::" in line]
    meas = {}
    for path in a.records:
        for line in open(path):
            r = json.loads(line)
            meas[r["id"]] = r["self"] + r["child"]
    byfile = collections.defaultdict(list)
    for k, v in meas.items():
        byfile[k.split("::")[0]].append(v)

    def cost(t):
        f = t.split("::")[0]
        if t in meas:
            return meas[t]
        if f in byfile:
            return sum(byfile[f]) / len(byfile[f])
        return a.unmeasured if conf.is_slow(f) else 0.02

    d = [cost(t) for t in order]
    slow = [conf.is_slow(t.split("::")[0]) for t in order]
    ordered = [d[k] for k in conf.order_for_workers(list(range(len(d))), slow, 2)]
    print(f"{len(order)} tests, {sum(t in meas for t in order)} measured, {sum(d):.0f} CPU s in all "
          f"(unmeasured tests of SLOW_FIRST files at {a.unmeasured} s); half of it: {sum(d) / 2:.0f} s")
    for name, t in (("load, collection order", replay_load(d)), ("worksteal, collection order", replay_worksteal(d)),
                    ("load, tests/conftest.py order", replay_load(ordered)),
                    ("worksteal, tests/conftest.py order", replay_worksteal(ordered))):
        print(f"  {name:36s} workers {t[0]:6.0f} s, {t[1]:6.0f} s: done after {max(t):6.0f} s ({max(t) / 60:.1f} min)")


if __name__ == "__main__":
    main()
