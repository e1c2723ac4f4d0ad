"""Golden cases run by CuTe DSL in child processes, a chunk at a time: the DSL can kill the
interpreter on bad input, so a chunk whose child dies is split until the case that kills it is
recorded as {"crash": true}. Used by make_golden_mma.py and make_golden_tcgen05.py, whose
``--worker FILE`` mode answers the cases of FILE ([kind, cases]) with one MARK line per case
({"i": index, ...})."""

import json
import os
import subprocess
import sys
import tempfile

MARK = "@@GOLDEN@@ "


def run_chunk(script, kind, cases, log, timeout_base):
    """The answers to cases (in order), each {"crash": True} where the DSL killed its child."""
    fd, path = tempfile.mkstemp(suffix=".json", prefix="golden_")
    with os.fdopen(fd, "w") as f:
        json.dump([kind, cases], f)
    try:
        p = subprocess.run([sys.executable, os.path.abspath(script), "--worker", path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout_base + 2 * len(cases))
        stdout = p.stdout
    except subprocess.TimeoutExpired as ex:
        stdout = ex.stdout or b""
    finally:
        os.unlink(path)
    res = {}
    for ln in stdout.decode("utf-8", "replace").splitlines():
        if ln.startswith(MARK):
            d = json.loads(ln[len(MARK):])
            res[d.pop("i")] = d
    if len(res) == len(cases):
        return [res[i] for i in range(len(cases))]
    first = min(i for i in range(len(cases)) if i not in res)
    if len(cases) == 1:
        log("  CRASH: %s" % json.dumps(cases[0]))
        return [{"crash": True}]
    head = [res[i] for i in range(first)]
    if first == 0:
        return (run_chunk(script, kind, cases[:1], log, timeout_base)
                + run_chunk(script, kind, cases[1:], log, timeout_base))
    return head + run_chunk(script, kind, cases[first:], log, timeout_base)
