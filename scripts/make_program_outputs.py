#!/usr/bin/env python3
"""Record what CuTe DSL prints for each program in tests/programs/ (the expected outputs).

What it does
    For every tests/programs/<name>.py (see tests/programs/harness.py for the list, the import
    rule and the normalisation), runs the program unchanged under CuTe DSL in a fresh
    subprocess (CUTE_DSL_ARCH=sm_90a; the DSL can crash the interpreter, so each program gets
    its own process and a time limit) and writes its normalised stdout to
    tests/programs/<name>.expected. tests/programs/test_programs.py runs the same files on
    cutelab (imports rewritten) and compares.

How to run
    /work/dslenv/bin/python scripts/make_program_outputs.py [name ...]
    (a Python with nvidia-cutlass-dsl==4.8.1, numpy and torch; no GPU is needed: the
    programs use only host code and @cute.jit functions run on the CPU).

    It refuses to store an output that has an MLIR-looking line, and reports programs that
    exit nonzero (their expected output then ends in '<<exit status nonzero>>'). This script
    does not import cutelab.
"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROG_DIR = os.path.join(ROOT, "tests", "programs")
sys.path.insert(0, PROG_DIR)
import harness  # noqa: E402


def run_dsl(name: str, timeout: float = 300.0):
    env = dict(os.environ, CUTE_DSL_ARCH="sm_90a", PYTHONHASHSEED="0")
    env.pop("PYTHONPATH", None)  # the DSL's own cutlass, never cutelab
    proc = subprocess.run([sys.executable, os.path.join(PROG_DIR, name + ".py")], cwd="/tmp",
                          env=env, capture_output=True, text=True, timeout=timeout)
    return proc.returncode, proc.stdout, proc.stderr


def main(argv):
    import cutlass  # noqa: F401  (fail early and clearly without the DSL)

    names = argv or harness.program_names()
    bad = 0
    for name in names:
        rc, out, err = run_dsl(name)
        text = harness.normalise(out, rc)
        mlir = harness.mlir_lines(text)
        if mlir:
            print(f"{name}: MLIR-looking lines, not stored: {mlir[:3]}", file=sys.stderr)
            bad += 1
            continue
        with open(os.path.join(PROG_DIR, name + ".expected"), "w") as f:
            f.write(text)
        tail = err.strip().splitlines()[-1] if rc and err.strip() else ""
        print(f"{name}: exit {rc}, {len(text.splitlines())} lines" + (f"  ({tail})" if tail else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
