"""Shared by scripts/make_program_outputs.py (CuTe DSL side) and test_programs.py (cutelab side).

A program is tests/programs/<name>.py, written against CuTe DSL (its original imports). Its expected
output, tests/programs/<name>.expected, is what it prints under CuTe DSL 4.8.1, normalised by
`normalise`. cutelab runs the same file with `rewrite_imports` applied and must print the same
normalised text.

Programs that launch kernels: CuTe DSL on a machine without a GPU compiles (traces) kernels but cannot
run them, so such a program is kept as a user without a GPU would run it: the calls that launch, and
the checks of their results, are commented out with a '# [needs a GPU]' mark, and a jit call that
compiles and launches becomes cute.compile(fn, ...) (each program's header says what changed). Their
expected outputs are then the trace-time prints. cutelab runs the launches on the CPU as well; tests
outside this directory check those results.

Import rule (the project's promise; applied line by line, nothing else changes):
    import cutlass.cute as X                 -> import cutelab as X
    import cutlass.cute.runtime as X         -> import cutelab.runtime as X
    from cutlass.cute.runtime import ...     -> from cutelab.runtime import ...
    from cutlass.cute.nvgpu import ...       -> from cutelab.nvgpu import ...
    import cutlass.cute.nvgpu.warp as X      -> import cutelab.nvgpu.warp as X   (any cutlass.cute.Y)
    from cutlass.cute import ...             -> from cutelab import ...
    import cutlass                           -> import cutelab as cutlass
    from cutlass.Y import ... / from cutlass import ...  -> from cutelab.Y import ... / from cutelab import ...
    import cutlass.Y as X                    -> import cutelab.Y as X
    import cuda.bindings.driver as X         -> from cutelab import cuda as X   (CuTe DSL's CUDA driver binding:
                                                cutelab.cuda has the names programs use, CUstream among them)
Any other import of cutlass (e.g. 'import cutlass.cute' without 'as') is refused: it has no one-line rewrite.

Normalisation (applied to both sides):
    * a hexadecimal address (0x followed by hex digits) becomes 0x?: pointers differ per run;
    * trailing spaces are dropped from each line and trailing blank lines from the text;
    * a nonzero exit status is appended as the line '<<exit status nonzero>>' (the traceback text,
      which differs between the two implementations, is not compared).
No line is dropped: CuTe DSL 4.8.1 printed no MLIR-only line for these programs when the outputs
were made (the generator refuses to write an output with a line that looks like MLIR: '!cute.',
'%' followed by a digit, or 'loc('). Two MLIR type names are let through because printing them is
part of the surface programs use: what `Tensor.type` prints, '!cute.memref<f16, gmem, align<16>,
"(4,8):(8,1)">' and '!cute.coord_tensor<"(0,0)", "(4,8):(1@0,1@1)">' (element type, memory space,
alignment and layout: cutelab prints them the same way).
"""
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))

_IMPORT_RULES = [
    (re.compile(r"^(\s*)import cutlass\.cute(\.[\w.]+)? as (\w+)\s*$"),
     lambda m: f"{m[1]}import cutelab{m[2] or ''} as {m[3]}"),
    (re.compile(r"^(\s*)from cutlass\.cute(\.[\w.]+)? import (.*)$"),
     lambda m: f"{m[1]}from cutelab{m[2] or ''} import {m[3]}"),
    (re.compile(r"^(\s*)import cutlass\s*$"), lambda m: f"{m[1]}import cutelab as cutlass"),
    # cutlass itself is cutelab (import cutlass -> import cutelab as cutlass), so its submodules are too
    (re.compile(r"^(\s*)from cutlass(\.[\w.]+)? import (.*)$"), lambda m: f"{m[1]}from cutelab{m[2] or ''} import {m[3]}"),
    (re.compile(r"^(\s*)import cutlass(\.[\w.]+) as (\w+)\s*$"), lambda m: f"{m[1]}import cutelab{m[2]} as {m[3]}"),
    (re.compile(r"^(\s*)import cuda\.bindings\.driver as (\w+)\s*$"), lambda m: f"{m[1]}from cutelab import cuda as {m[2]}"),
]
_MLIR = re.compile(r"!cute\.(?!memref<|coord_tensor<)|%\d|\bloc\(")
_ADDR = re.compile(r"0x[0-9a-fA-F]+")


def program_names():
    """The programs, sorted: every tests/programs/*.py except this module, conftest.py and the tests (test_*.py)."""
    return sorted(f[:-3] for f in os.listdir(HERE)
                  if f.endswith(".py") and f not in ("harness.py", "conftest.py") and not f.startswith("test_"))


def rewrite_imports(source: str) -> str:
    """Apply the import rule to each line of `source`; every other line is left as it is.

    >>> print(rewrite_imports("import cutlass\\nimport cutlass.cute as cute\\nfrom cutlass.cute.nvgpu import warp\\n"
    ...                       "import cuda.bindings.driver as cuda"))
    import cutelab as cutlass
    import cutelab as cute
    from cutelab.nvgpu import warp
    from cutelab import cuda as cuda
    """
    out = []
    for line in source.split("\n"):
        for pat, rep in _IMPORT_RULES:
            m = pat.match(line)
            if m:
                line = rep(m)
                break
        else:
            if re.match(r"^\s*(import|from)\s+cutlass\b", line):
                raise ValueError(f"rewrite_imports: no rule for the import line {line!r}")
        out.append(line)
    return "\n".join(out)


def normalise(stdout: str, returncode: int) -> str:
    """The text compared: addresses masked, trailing spaces and blank lines dropped, exit status noted.

    >>> normalise("raw_ptr(0x00007ffe2662: f32)  \\n\\n", 1)
    'raw_ptr(0x?: f32)\\n<<exit status nonzero>>\\n'
    """
    lines = [_ADDR.sub("0x?", ln).rstrip() for ln in stdout.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    if returncode != 0:
        lines.append("<<exit status nonzero>>")
    return "\n".join(lines) + "\n"


def mlir_lines(text: str):
    """Lines of `text` that look MLIR-specific (the generator refuses to store such output).

    >>> mlir_lines('a = !cute.memref<f16, gmem, "(4,8):(8,1)">\\nb = !cute.layout<"(4,8):(8,1)">\\n%0 = x')
    ['b = !cute.layout<"(4,8):(8,1)">', '%0 = x']
    """
    return [ln for ln in text.split("\n") if _MLIR.search(ln)]
