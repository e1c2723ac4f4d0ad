#!/usr/bin/env python3
"""Golden vectors for cute.printf: what CuTe DSL prints for a format and its arguments, called in a
@cute.jit function on the host (a GPU is not needed; kernels print with the same C formats).

    /work/dslenv/bin/python scripts/make_printf_golden.py   # writes tests/golden/printf.json

Each case is (format or None, [ARG, ...]); an ARG is [TYPE, VALUE] with TYPE a cutlass scalar type
name (Int32, Float32, Boolean, ...), "int", "float", "bool", "tuple" (VALUE a nested list) or
"layout" (VALUE [shape, stride] as nested lists). A format of None calls cute.printf(*args). Each
case runs in a forked child (the DSL can crash the interpreter); the child's stdout is the
output. tests/kernel/test_printf_format.py replays them on cutelab. This script does not import
cutelab.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "tests", "golden", "printf.json")

CASES = [
    ("%d %f", [["Int32", 7], ["Float32", 3.14]]),
    ("{} {} {}", [["Float32", 3.14], ["Int32", 7], ["Boolean", True]]),
    ("%d", [["Boolean", True]]),
    ("{}", [["tuple", [3, 8]]]),
    ("{}", [["float", 2.5]]),
    ("{}", [["bool", True]]),
    (None, [["Float32", 3.14], ["Int32", 7], ["tuple", [3, 8]]]),
    ("{}", [["layout", [[4, 2], None]]]),
    ("%5d|%-4d|%x", [["Int32", 7], ["Int32", 7], ["Int32", 7]]),
    ("{}", [["layout", [[4, [2, 3]], None]]]),
    ("{}", [["tuple", [1, [2, 3]]]]),
    ("%u", [["Int32", -1]]),
    ("%lld", [["Int64", -5]]),
    ("%e %g", [["Float32", 3.14], ["Float32", 3.14]]),
    ("%c", [["Int32", 65]]),
    ("{}", [["Int8", -3]]),
    ("{}", [["BFloat16", 2.5]]),
    ("{}", [["Float64", 1.5]]),
    ("{}", [["Float16", 1.5]]),
    ("{}", [["Int64", -3]]),
    ("{}", [["Uint8", 200]]),
    ("%%{}", [["int", 1]]),
    ("%d", [["int", 5]]),
    ("%.3f|%8.2f|%-8.1f|", [["Float32", 2.71828], ["Float32", 2.71828], ["Float32", 2.71828]]),
    ("%08.3f %+d % d", [["Float32", 1.5], ["Int32", 3], ["Int32", 3]]),
    ("%X %o %#x", [["Int32", 255], ["Int32", 8], ["Int32", 255]]),
    ("{} and {}", [["Uint32", 4000000000], ["Int16", -7]]),
    ("a={}, b=%.1f", [["tuple", [1, 2]], ["Float32", 0.25]]),
]


def make_arg(cutlass, cute, a):
    kind, v = a
    if kind == "int":
        return int(v)
    if kind == "float":
        return float(v)
    if kind == "bool":
        return bool(v)
    if kind == "tuple":
        def tup(x):
            return tuple(tup(y) for y in x) if isinstance(x, list) else x
        return tup(v)
    if kind == "layout":
        def tup(x):
            return tuple(tup(y) for y in x) if isinstance(x, list) else x
        shape, stride = v
        return cute.make_layout(tup(shape), stride=tup(stride)) if stride is not None else cute.make_layout(tup(shape))
    return getattr(cutlass, kind)(v)


def run(case):
    import cutlass
    import cutlass.cute as cute

    fmt, args = case

    @cute.jit
    def f():
        vals = [make_arg(cutlass, cute, a) for a in args]
        if fmt is None:
            cute.printf(*vals)
        else:
            cute.printf(fmt, *vals)

    f()


def main():
    import cutlass  # noqa: F401

    out = []
    for case in CASES:
        r, w = os.pipe()
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            os.dup2(w, 1)
            try:
                run(case)
                sys.stdout.flush()
                os._exit(0)
            except Exception as e:  # noqa: BLE001
                sys.stdout.flush()
                os.write(2, f"{case}: {e}\n".encode())
                os._exit(3)
        os.close(w)
        buf = b""
        while True:
            chunk = os.read(r, 65536)
            if not chunk:
                break
            buf += chunk
        os.close(r)
        _, st = os.waitpid(pid, 0)
        rec = {"format": case[0], "args": case[1]}
        if st:
            rec["failed"] = True
        else:
            rec["output"] = buf.decode()
        out.append(rec)
        print(case[0], repr(rec.get("output")), file=sys.stderr)
    with open(OUT, "w") as f:
        json.dump({"dsl_version": getattr(cutlass, "__version__", "4.8.1"), "cases": out}, f, indent=1)
    print("wrote", OUT, file=sys.stderr)


if __name__ == "__main__":
    main()
