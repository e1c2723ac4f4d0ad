"""Ahead-of-time export (CuTe DSL's ``export_to_c``) and its loading (``cute.runtime.load_module``).

cutelab compiles a jit function when the program runs, from the program's Python: an exported object
therefore carries what rebuilds the compiled function, not machine code. ``export_to_c`` writes

- a C header with CuTe DSL's names (``{prefix}_Kernel_Module_t``, ``{prefix}_Kernel_Module_Load`` /
  ``_Unload``, ``{prefix}_Tensor_{arg}_t`` with ``data``, ``dynamic_shapes``, ``dynamic_strides``,
  ``cute_dsl_{prefix}_wrapper``), or for a function compiled with ``--enable-tvm-ffi`` the symbol
  ``__tvm_ffi_{name}``;
- an object file (compiled from generated C by ``$CC``, else ``cc``/``gcc``: position independent, so
  it links into a shared library) whose ``.cutelab_aot`` section holds one record: the jit function's
  module, name and source text, the compile's arguments (tensors as fake tensors: element type,
  shape and strides with their dynamic entries, alignment), its options and parameter names.

``load_module`` of such an object or of a shared library linked from several finds the records,
runs each program's source as a fresh module (its ``if __name__ == "__main__"`` part does not run),
and compiles the function again with ``cute.compile`` for the recorded arguments: on the CPU
interpreter without a GPU, through NVRTC with one. The object's C entry points cannot run a kernel
without Python: called from C they print why on stderr and return an error (cudaErrorNotSupported,
or -1 with a TVM-FFI error). A module CuTe DSL exported (host code of its MLIR pipeline, a cubin) is
refused, naming what was found.

>>> rec = {"format": FORMAT, "prefix": "f"}; _records(_pack(rec) + b"junk" + _pack(rec)) == [rec, rec]
True
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile
import types
import warnings
from typing import Any, Callable, Dict, List, Optional, Tuple

from ...errors import CompileError, LaunchError

FORMAT = "cutelab-aot-1"
_MAGIC = b"\0CUTELAB-AOT\0"  # NUL bytes: never inside a record's JSON text (JSON escapes them)
_SECTION = ".cutelab_aot"
_NOT_SUPPORTED = 801  # cudaErrorNotSupported


class AotSource:
    """What cute.compile was given (kept on its result to export it later): the callable, its
    positional arguments, keyword arguments and options."""

    __slots__ = ("fn", "args", "kwargs", "options", "target")

    def __init__(self, fn: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any], options: Any, target: Any = None):
        self.fn, self.args, self.kwargs, self.options = fn, args, kwargs, options
        self.target = fn if target is None else target  # the user's function behind fn (api.jit_target)


def remember(compiled: Any, fn: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any], options: Any,
             target: Any = None) -> None:
    """Keep the compile's inputs on its result, for export_to_c (target: the user's function behind fn, as
    cute.compile binds it)."""
    try:
        compiled._aot = AotSource(fn, tuple(args), dict(kwargs), options, target)
    except AttributeError:  # a result that takes no attributes: export_to_c then says it has nothing to export
        pass


def _tvm_ffi_options(options: Any) -> bool:
    if options is None:
        return False
    text = options if isinstance(options, str) else " ".join(str(o) for o in options) \
        if isinstance(options, (list, tuple)) else str(options)
    return "--enable-tvm-ffi" in text


# ---------------------------------------------------------------------------------------------------------
# the record: the compile's arguments, as values JSON holds


def _dtype_name(dt: Any) -> str:
    return str(dt)


def _dtype_of(name: str, op: str) -> Any:
    from ... import numeric

    dt = getattr(numeric, name, None)
    if dt is None or not numeric.is_numeric_type(dt):
        raise LaunchError(f"{op}: the record names the element type {name!r}, which cutelab does not have")
    return dt


class _Encoder:
    """The compile's arguments as JSON values; a symbolic integer shared by two places stays one."""

    def __init__(self, op: str, names: List[str]):
        self.op, self.names = op, names
        self.syms: Dict[int, int] = {}  # id of a SymInt or DynInt -> its number in the record
        self.keep: List[Any] = []  # (those objects, alive while their ids are keys)

    def sym(self, width: int, div: int, key: Any) -> Dict[str, Any]:
        if id(key) not in self.syms:
            self.syms[id(key)] = len(self.syms)
            self.keep.append(key)
        return {"sym": self.syms[id(key)], "width": int(width), "div": int(div)}

    def leaf(self, x: Any, where: str) -> Any:
        from ...dynamic import DynInt
        from ...fake import SymInt

        if isinstance(x, SymInt):
            return self.sym(x.width, x.divisibility, x)
        if isinstance(x, DynInt):
            width = getattr(getattr(x, "dtype", None), "width", 32)
            return self.sym(64 if width == 64 else 32, int(getattr(x, "div", 1) or 1), x)
        if isinstance(x, int) and not isinstance(x, bool):
            return int(x)
        raise CompileError(f"{self.op}: {where} is {x!r}; the export records integer or symbolic extents and strides")

    def tensor(self, i: int, dtype: Any, shape: Any, stride: Any, memspace: Any, align: int) -> Dict[str, Any]:
        where = f"argument {i} ({self.names[i] or 'unnamed'})"
        return {"kind": "tensor", "dtype": _dtype_name(dtype),
                "shape": [self.leaf(s, f"{where}'s shape") for s in shape],
                "stride": [self.leaf(s, f"{where}'s stride") for s in stride],
                "memspace": str(memspace), "align": int(align)}

    def encode(self, i: int, v: Any) -> Dict[str, Any]:
        from ...fake import FakeTensor
        from ...int_tuple import flatten_to_tuple
        from ...numeric import FloatValue, IntValue, is_numeric_type
        from ...runtime import EnvStream
        from .args import _as_tensor_arg, _is_storage_tensor, _is_stream

        if isinstance(v, FakeTensor):
            return self.tensor(i, v.element_type, v.shape, v.stride, v.memspace, v.assumed_align)
        if hasattr(v, "__dlpack__") and not _is_storage_tensor(v):
            v = _as_tensor_arg(v)
        if _is_storage_tensor(v):
            L = v.layout
            if isinstance(L.shape, tuple) and any(isinstance(s, tuple) for s in L.shape):
                raise CompileError(f"{self.op}: argument {i} has the nested layout {L}; the export records tensors "
                                   f"of flat layouts (as from_dlpack makes them)")
            shape, stride = flatten_to_tuple(L.shape), flatten_to_tuple(L.stride)
            return self.tensor(i, v.element_type, shape, stride, "gmem", int(getattr(v.engine, "align", 0) or
                                                                             max(1, v.element_type.bytes)))
        if isinstance(v, EnvStream):
            return {"kind": "env_stream"}
        if _is_stream(v):
            return {"kind": "stream"}
        if v is None or isinstance(v, (bool, str)):
            return {"kind": "py", "value": v}
        if isinstance(v, (IntValue, FloatValue)):
            return {"kind": "number", "dtype": _dtype_name(v.dtype), "value": float(v) if v.dtype.is_float else int(v)}
        if isinstance(v, (int, float)):
            return {"kind": "py", "value": v}
        if is_numeric_type(v):
            return {"kind": "dtype", "name": _dtype_name(v)}
        if isinstance(v, (tuple, list)):
            return {"kind": "tuple" if isinstance(v, tuple) else "list", "items": [self.encode(i, x) for x in v]}
        raise CompileError(f"{self.op}: argument {i} ({self.names[i] or 'unnamed'}) is of type {type(v).__name__}; "
                           f"an export records the compile's arguments to compile the function again when it is "
                           f"loaded, and records tensors (fake or real), streams, numbers, strings, element types "
                           f"and tuples of them only")


def _decode(d: Dict[str, Any], syms: Dict[int, Any], op: str) -> Any:
    from ...fake import FakeTensor, SymInt
    from ...runtime import EnvStream
    from ..cuda.driver import CUstream

    kind = d["kind"]
    if kind == "tensor":
        def leaf(x: Any) -> Any:
            if isinstance(x, dict):
                s = syms.get(x["sym"])
                if s is None:
                    s = syms[x["sym"]] = SymInt(x["width"], divisibility=x["div"])
                return s
            return int(x)

        return FakeTensor(_dtype_of(d["dtype"], op), tuple(leaf(s) for s in d["shape"]),
                          tuple(leaf(s) for s in d["stride"]), d["memspace"], d["align"], op)
    if kind == "env_stream":
        return EnvStream(0)
    if kind == "stream":
        return CUstream(0)
    if kind == "py":
        return d["value"]
    if kind == "number":
        return _dtype_of(d["dtype"], op)(d["value"])
    if kind == "dtype":
        return _dtype_of(d["name"], op)
    if kind in ("tuple", "list"):
        items = [_decode(x, syms, op) for x in d["items"]]
        return tuple(items) if kind == "tuple" else items
    raise LaunchError(f"{op}: the record has an argument of kind {kind!r}, which this cutelab does not know")


# ---------------------------------------------------------------------------------------------------------
# export


def _source_of(target: Any, op: str) -> Dict[str, Any]:
    """The jit function's module, name, file and source text: what rebuilds it when loaded."""
    fn = getattr(target, "__func__", target)
    if isinstance(target, types.MethodType):
        raise CompileError(f"{op}: the compiled function is a method bound to {type(target.__self__).__name__} "
                           f"object; an export rebuilds the function from its module by name, so export a "
                           f"module-level @cute.jit function")
    qual = getattr(fn, "__qualname__", "")
    if not qual or "<locals>" in qual or "<lambda>" in qual:
        raise CompileError(f"{op}: {qual or repr(fn)} is not defined at the top of its module; an export rebuilds the "
                           f"function from its module by name, so define it at module level")
    path = inspect.getsourcefile(fn) or getattr(fn, "__code__", None) and fn.__code__.co_filename
    if not path or not os.path.isfile(path):
        raise CompileError(f"{op}: the source file of {qual} ({path!r}) cannot be read; an export carries it")
    with open(path, encoding="utf-8") as f:
        source = f.read()
    return {"module": getattr(fn, "__module__", "__main__"), "qualname": qual, "file": os.path.abspath(path),
            "source": source, "sha256": hashlib.sha256(source.encode()).hexdigest()}


def _record(compiled: Any, op: str, prefix: str, kind: str) -> Dict[str, Any]:
    from .args import _constexpr_positions

    src = getattr(compiled, "_aot", None)
    if src is None:
        raise CompileError(f"{op}: this compiled function was not made by cute.compile, so cutelab does not know "
                           f"the arguments to record")
    target = src.target
    try:
        params = [p for p in inspect.signature(target).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params][: len(src.args)]
    names += [""] * (len(src.args) - len(names))
    if src.kwargs:
        raise CompileError(f"{op}: cute.compile was given the keyword arguments {sorted(src.kwargs)} that name no "
                           f"positional parameter; an export records positional arguments only")
    const = _constexpr_positions(target, len(src.args))
    enc = _Encoder(op, names)
    args = [dict(enc.encode(i, a), name=names[i], constexpr=i in const) for i, a in enumerate(src.args)]
    options = src.options if src.options is None or isinstance(src.options, str) else \
        [str(o) for o in src.options] if isinstance(src.options, (list, tuple)) else str(src.options)
    return dict(format=FORMAT, kind=kind, prefix=prefix, function=getattr(target, "__name__", prefix),
                options=options, args=args, **_source_of(target, op))


def _pack(rec: Dict[str, Any]) -> bytes:
    body = json.dumps(rec, sort_keys=True).encode()
    return _MAGIC + len(body).to_bytes(8, "little") + body


def _c_bytes(data: bytes) -> str:
    lines = []
    for k in range(0, len(data), 24):
        lines.append("    " + ", ".join(str(b) for b in data[k: k + 24]) + ",")
    return "\n".join(lines)


def _c_compiler(op: str) -> str:
    for cc in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if cc and shutil.which(cc):
            return cc
    raise CompileError(f"{op}: no C compiler found ($CC, cc, gcc or clang): cutelab writes the object file by "
                       f"compiling generated C")


def _compile_object(c_source: str, out_path: str, op: str, pic: bool = True) -> None:
    cc = _c_compiler(op)
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "export.c")
        with open(src, "w") as f:
            f.write(c_source)
        cmd = [cc, "-c", "-O1", "-o", out_path, src] + (["-fPIC"] if pic else [])
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise CompileError(f"{op}: {' '.join(cmd)} failed:\n{p.stderr.strip()}")


def _why_c(op: str) -> str:
    return (f"{op}: this object was exported by cutelab, whose kernels run through Python: load it with "
            f"cute.runtime.load_module in a program run by cutelab (cutelab run); its C entry points cannot run "
            f"the kernel")


def _c_string(s: str) -> str:
    return json.dumps(s)  # a C string literal: JSON's escapes are C's for these characters


_C_TYPES = {("int", 8): "int8_t", ("int", 16): "int16_t", ("int", 32): "int32_t", ("int", 64): "int64_t",
            ("uint", 8): "uint8_t", ("uint", 16): "uint16_t", ("uint", 32): "uint32_t", ("uint", 64): "uint64_t",
            ("float", 32): "float", ("float", 64): "double", ("float", 16): "uint16_t", ("bool", 1): "uint8_t",
            ("bool", 8): "uint8_t"}


def _header(rec: Dict[str, Any], entry: str, op: str) -> str:
    """The C header of a C export: CuTe DSL's module, argument structs and wrapper names."""
    p = rec["prefix"]
    out = ["", "#pragma once", "", "#include <cuda_runtime.h>", "#include <stdio.h>", "#include <stdint.h>", "",
           f"// Exported by cutelab from {rec['function']} ({os.path.basename(rec['file'])}). cutelab runs its",
           "// kernels through Python: load the object with cute.runtime.load_module in a program run by",
           "// cutelab. Called from C, these functions print why on stderr and return an error.", "",
           "#ifndef CUTE_DSL_CUDA_ERROR_CHECK",
           "#define CUTE_DSL_CUDA_ERROR_CHECK(err) { \\",
           "    if ((err) != cudaSuccess) { \\",
           '        printf("Got Cuda Error %s: %s\\n", cudaGetErrorName(err), cudaGetErrorString(err)); \\',
           "    } \\", "}", "#endif", "",
           "typedef struct {", "    cudaLibrary_t module;", f"}} {p}_Kernel_Module_t;", "",
           "#ifdef __cplusplus", 'extern "C" {', "#endif",
           f"void _mlir_{p}_cuda_init(void **);", f"void _mlir_{p}_cuda_load_to_device(void **);",
           f"static inline void {p}_Kernel_Module_Load({p}_Kernel_Module_t *module) {{",
           "    cudaLibrary_t *libraryPtr = &(module->module);", "    cudaError_t ret = cudaSuccess;",
           "    struct {", "        cudaLibrary_t **libraryPtr;", "        cudaError_t *ret;",
           "    } initArgs = {&libraryPtr, &ret};", f"    _mlir_{p}_cuda_init((void **)(&initArgs));",
           "    CUTE_DSL_CUDA_ERROR_CHECK(ret);", "}", "",
           f"static inline void {p}_Kernel_Module_Unload({p}_Kernel_Module_t *module) {{",
           "    (void)module;", "}", "", "#ifdef __cplusplus", "}", "#endif", ""]
    params, slots = [f"{p}_Kernel_Module_t *module"], []
    for i, a in enumerate(rec["args"]):
        if a["constexpr"]:
            continue
        name = a["name"] or f"arg{i}"
        if a["kind"] == "tensor":
            t = f"{p}_Tensor_{name}_t"
            out += ["typedef struct {", "    void *data;"]
            dyn_sh = [s for s in a["shape"] if isinstance(s, dict)]
            dyn_st = [s for s in a["stride"] if isinstance(s, dict)]
            for field, dyn in (("dynamic_shapes", dyn_sh), ("dynamic_strides", dyn_st)):
                if dyn:
                    width = {s["width"] for s in dyn}
                    ctype = "int64_t" if 64 in width else "int32_t"
                    out.append(f"    {ctype} {field}[{len(dyn)}];")
            out += [f"}} {t};", "", ""]
            params.append(f"{t} *{name}")
            slots.append(name)
        elif a["kind"] in ("stream", "env_stream"):
            params.append(f"cudaStream_t {name}")
            slots.append(f"&{name}")
        elif a["kind"] == "number" or (a["kind"] == "py" and type(a["value"]) in (int, float, bool)):
            if a["kind"] == "number":
                dt = _dtype_of(a["dtype"], op)
                ctype = _C_TYPES.get((dt.kind, dt.width))
            else:
                ctype = {int: "int32_t", float: "float", bool: "uint8_t"}[type(a["value"])]
            if ctype is None:
                raise CompileError(f"{op}: argument {i} ({name}) is a runtime {a['dtype']}, which has no C type in "
                                   f"the export's header")
            params.append(f"{ctype} {name}")
            slots.append(f"&{name}")
        else:
            raise CompileError(f"{op}: argument {i} ({name}) is a runtime {a['kind']} value without a C form; "
                               f"mark it cutlass.Constexpr to export the function")
    n = len(slots) + 1
    out += ["#ifdef __cplusplus", 'extern "C"', "#endif", f"void {entry}(void **args, int32_t num_args);", "",
            f"static inline int32_t cute_dsl_{p}_wrapper({', '.join(params)}) {{", "    int32_t ret = 0;",
            f"    void *args[{n}] = {{", "        " + ", ".join(slots + ["&ret"]), "    };",
            "    (void)module;", f"    {entry}(args, {n});", "    return ret;", "}", ""]
    return "\n".join(out)


def _object_c(rec: Dict[str, Any], functions: str) -> str:
    """C source of the object: the record in its section and the C entry points."""
    data = _pack(rec)
    sym = f"{rec['prefix']}_cutelab_aot_record"
    return "\n".join([
        "#include <stdint.h>", "#include <stdio.h>", "",
        f"/* cutelab export of {rec['function']}: the record cute.runtime.load_module reads. */",
        "#if defined(__APPLE__)",
        '#define CUTELAB_AOT_SECTION "__DATA,__cutelab_aot"',
        "#else",
        f'#define CUTELAB_AOT_SECTION "{_SECTION}"',
        "#endif",
        f'__attribute__((used, section(CUTELAB_AOT_SECTION))) const unsigned char {sym}[{len(data)}] = {{',
        _c_bytes(data), "};", "", functions, ""])


def export_c(compiled: Any, file_path: str, file_name: str, function_prefix: str = "") -> None:
    """``compiled.export_to_c(file_path, file_name, function_prefix)``: FILE_NAME.h and FILE_NAME.o in
    FILE_PATH, symbols prefixed with function_prefix (default: file_name)."""
    prefix = function_prefix or file_name
    op = f"{getattr(compiled, 'name', 'compiled')}.export_to_c"
    if not prefix.isidentifier():
        raise CompileError(f"{op}: the function prefix {prefix!r} is not a C identifier")
    rec = _record(compiled, op, prefix, "c")
    entry = f"_mlir_{prefix}__mlir_ciface_cutlass_{rec['function']}"
    msg = _c_string(_why_c(prefix if prefix == rec["function"] else f"{prefix} ({rec['function']})"))
    functions = "\n".join([
        f"static void {prefix}_cutelab_refuse(void) {{ fprintf(stderr, \"%s\\n\", {msg}); }}",
        f"void _mlir_{prefix}_cuda_init(void **args) {{",
        f"    {prefix}_cutelab_refuse();",
        f"    if (args && args[1]) *(int32_t *)args[1] = {_NOT_SUPPORTED};  /* the result slot */",
        "}",
        f"void _mlir_{prefix}_cuda_load_to_device(void **args) {{",
        f"    {prefix}_cutelab_refuse();",
        f"    if (args && args[2]) *(int32_t *)args[2] = {_NOT_SUPPORTED};",
        "}",
        f"void {entry}(void **args, int32_t num_args) {{",
        f"    {prefix}_cutelab_refuse();",
        f"    if (args && num_args > 0 && args[num_args - 1]) *(int32_t *)args[num_args - 1] = {_NOT_SUPPORTED};",
        "}"])
    header = _header(rec, entry, op)
    obj = os.path.join(file_path, file_name + ".o")
    _compile_object(_object_c(rec, functions), obj, op)
    with open(os.path.join(file_path, file_name + ".h"), "w") as f:
        f.write(header)


def export_tvm_ffi(compiled: Any, object_file_path: str, function_name: Optional[str] = None, *,
                   enable_pic: bool = True, export_only_tvm_ffi_symbols: bool = False) -> None:
    """``compiled.export_to_c(object_file_path, function_name)`` of a function compiled with
    ``--enable-tvm-ffi``: an object defining ``__tvm_ffi_{function_name}``."""
    op = f"{getattr(compiled, 'name', 'compiled')}.export_to_c"
    name = function_name or getattr(compiled, "name", "")
    if not name.isidentifier():
        raise CompileError(f"{op}: the function name {name!r} is not a C identifier")
    ext = os.path.splitext(object_file_path)[1]
    if ext in (".ll", ".bc"):
        raise CompileError(f"{op}: cutelab writes object files only, not LLVM {ext} files ({object_file_path!r})")
    rec = _record(compiled, op, name, "tvm_ffi")
    msg = _c_string(_why_c(f"__tvm_ffi_{name} ({rec['function']})"))
    functions = "\n".join([
        "int TVMFFIErrorSetRaisedFromCStr(const char *kind, const char *message) __attribute__((weak));",
        f"int __tvm_ffi_{name}(void *self, const void *args, int32_t num_args, void *result) {{",
        "    (void)self; (void)args; (void)num_args; (void)result;",
        f'    fprintf(stderr, "%s\\n", {msg});',
        f'    if (TVMFFIErrorSetRaisedFromCStr) TVMFFIErrorSetRaisedFromCStr("RuntimeError", {msg});',
        "    return -1;", "}"])
    _compile_object(_object_c(rec, functions), object_file_path, op, pic=enable_pic)


def export_to_c(compiled: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> None:
    """A compiled function's ``export_to_c``, in the form of its compile: TVM-FFI's (object path and function
    name) for a function compiled with ``--enable-tvm-ffi``, else the C header and object."""
    src = getattr(compiled, "_aot", None)
    if (src is not None and _tvm_ffi_options(src.options)) or "function_name" in kwargs or "object_file_path" in kwargs:
        return export_tvm_ffi(compiled, *args, **kwargs)
    return export_c(compiled, *args, **kwargs)


# ---------------------------------------------------------------------------------------------------------
# load


def _records(data: bytes) -> List[Dict[str, Any]]:
    """The records in an object's or shared library's bytes."""
    out, at = [], data.find(_MAGIC)
    while at >= 0:
        n = int.from_bytes(data[at + len(_MAGIC): at + len(_MAGIC) + 8], "little")
        start = at + len(_MAGIC) + 8
        try:
            rec = json.loads(data[start: start + n].decode())
        except (UnicodeDecodeError, ValueError):
            rec = None
        if isinstance(rec, dict) and "format" in rec:
            out.append(rec)
            at = data.find(_MAGIC, start + n)
        else:
            at = data.find(_MAGIC, at + 1)
    return out


def _cute_dsl_signs(data: bytes) -> List[str]:
    """Names in an object that CuTe DSL's exports have (its MLIR host code, TVM-FFI entry, metadata)."""
    import re

    signs = []
    for pat in (rb"_mlir_[A-Za-z0-9_]*_cuda_init", rb"[A-Za-z0-9_]+_args_spec\0", rb"__tvm_ffi_[A-Za-z0-9_]+",
                rb"_mlir_[A-Za-z0-9_]*__mlir_ciface_[A-Za-z0-9_]+", rb"cuda_dialect_runtime", rb"cudaLibraryLoadData"):
        m = re.search(pat, data)
        if m:
            signs.append(m.group(0).rstrip(b"\0").decode(errors="replace"))
    return signs


_SOURCES: Dict[str, types.ModuleType] = {}


def _file_sha(path: str) -> Optional[str]:
    try:
        with open(path, encoding="utf-8") as f:
            return hashlib.sha256(f.read().encode()).hexdigest()
    except (OSError, UnicodeDecodeError):
        return None


def _program_module(rec: Dict[str, Any]) -> types.ModuleType:
    """The exporting program's module: the running program where it exported itself, imported by name
    where it is a module, else its recorded source run as a fresh module (``__name__`` is not
    ``"__main__"``, so its main part does not run; code outside that part runs again)."""
    name = rec["module"]
    main = sys.modules.get("__main__")
    if name == "__main__" and main is not None and os.path.abspath(getattr(main, "__file__", "") or "") == rec["file"] \
            and _file_sha(rec["file"]) == rec["sha256"]:
        return main  # the program that exported is the one loading: its own module, not a second run of it
    if name != "__main__":
        mod = sys.modules.get(name)
        try:
            mod = mod or importlib.import_module(name)
        except ImportError:
            mod = None
        if mod is not None and os.path.abspath(getattr(mod, "__file__", "") or "") == rec["file"]:
            return mod
    key = rec["sha256"]
    mod = _SOURCES.get(key)
    if mod is not None:
        return mod
    stem = os.path.splitext(os.path.basename(rec["file"]))[0]
    mod = types.ModuleType(f"cutelab_aot_{stem}_{key[:12]}")
    mod.__file__ = rec["file"]
    sys.modules[mod.__name__] = mod
    here = os.path.dirname(rec["file"])
    added = os.path.isdir(here) and here not in sys.path
    if added:
        sys.path.insert(0, here)  # the program's sibling imports, as when it ran
    try:
        exec(compile(rec["source"], rec["file"], "exec"), mod.__dict__)
    except BaseException:
        sys.modules.pop(mod.__name__, None)
        raise
    finally:
        if added and here in sys.path:
            sys.path.remove(here)
    _SOURCES[key] = mod
    return mod


class LoadedFunction:
    """An exported function, compiled again by cutelab for its recorded arguments. A call whose tensors
    differ from those (extents, strides or divisibility CuTe DSL's exported functions do not check
    either) warns and runs the function compiled for the tensors as given."""

    def __init__(self, rec: Dict[str, Any], jit_fn: Any, compiled: Any, fakes: List[Any], path: str):
        self.rec, self.jit_fn, self.compiled, self.fakes, self.path = rec, jit_fn, compiled, fakes, path
        self.__name__ = rec["prefix"]
        self.names = [a["name"] for a in rec["args"] if not a["constexpr"]]
        self._const = [(i, f) for i, (a, f) in enumerate(zip(rec["args"], fakes)) if a["constexpr"]]

    def __repr__(self) -> str:
        return f"<{self.rec['prefix']}: {self.rec['function']} loaded from {self.path} (cutelab export)>"

    def _positional(self, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> List[Any]:
        out = list(args)
        for k, v in kwargs.items():
            if k not in self.names:
                raise TypeError(f"{self.__name__}: the exported function has no argument {k!r} (its arguments: "
                                f"{', '.join(self.names)})")
            i = self.names.index(k)
            while len(out) <= i:
                out.append(None)
            out[i] = v
        return out

    def _mismatch(self, args: List[Any]) -> Optional[str]:
        from ...fake import FakeTensor
        from .args import _as_tensor_arg

        kept = [f for a, f in zip(self.rec["args"], self.fakes) if not a["constexpr"]]
        seen: Dict[int, Any] = {}
        for j, (f, a) in enumerate(zip(kept, args)):
            if isinstance(f, FakeTensor):
                try:
                    f.check(_as_tensor_arg(a), j, self.__name__, seen, self.names[j])
                except LaunchError as e:
                    return str(e)
        return None

    def _with_env_streams(self, args: List[Any]) -> List[Any]:
        """args with the environment's stream where a TVM-FFI call leaves out an env stream argument."""
        from ...runtime import ENV_STREAM

        kinds = [a["kind"] for a in self.rec["args"] if not a["constexpr"]]
        env = [j for j, k in enumerate(kinds) if k == "env_stream"]
        if not env or len(args) != len(kinds) - len(env):
            return args
        out = list(args)
        for j in env:
            out.insert(j, ENV_STREAM)
        return out

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        given = self._positional(args, kwargs)
        full = self._with_env_streams(given)
        why = self._mismatch(full)
        if why is None:
            return self.compiled(*given)
        warnings.warn(f"cute.runtime.load_module({self.path!r}): {why}. CuTe DSL's exported "
                      f"function does not check this either; cutelab runs {self.rec['function']} for the "
                      f"arguments as given", RuntimeWarning, stacklevel=2)
        call = list(full)
        for i, v in self._const:
            call.insert(i, v)
        return self.jit_fn(*call)


class LoadedModule:
    """What ``cute.runtime.load_module`` returns for a cutelab export: its functions by prefix (or, for
    TVM-FFI exports, by function name), compiled on first use."""

    def __init__(self, path: str, records: List[Dict[str, Any]], enable_tvm_ffi: bool,
                 compile_fn: Callable[..., Any]):
        self._path, self._records, self._tvm, self._compile = path, records, enable_tvm_ffi, compile_fn
        self._loaded: Dict[str, LoadedFunction] = {}

    def __repr__(self) -> str:
        return f"<cutelab module {self._path}: {', '.join(r['prefix'] for r in self._records)}>"

    def __dir__(self) -> List[str]:
        return sorted(set(object.__dir__(self)) | {r["prefix"] for r in self._records})

    def __getattr__(self, prefix: str) -> Any:
        if prefix.startswith("_"):
            raise AttributeError(prefix)
        got = self._loaded.get(prefix)
        if got is not None:
            return got
        kind = "tvm_ffi" if self._tvm else "c"
        recs = [r for r in self._records if r["prefix"] == prefix]
        if not recs:
            raise AttributeError(f"cute.runtime.load_module({self._path!r}): no function {prefix!r} in the module "
                                 f"(it has {', '.join(repr(r['prefix']) for r in self._records)})")
        rec = recs[0]
        if rec["kind"] != kind:
            how = "with enable_tvm_ffi=True" if rec["kind"] == "tvm_ffi" else "without enable_tvm_ffi"
            raise LaunchError(f"cute.runtime.load_module({self._path!r}).{prefix}: the function was exported "
                              f"{'with' if rec['kind'] == 'tvm_ffi' else 'without'} --enable-tvm-ffi; load the "
                              f"module {how}")
        op = f"cute.runtime.load_module({self._path!r}).{prefix}"
        mod = _program_module(rec)
        jit_fn: Any = mod
        for part in rec["qualname"].split("."):
            jit_fn = getattr(jit_fn, part, None)
            if jit_fn is None:
                raise LaunchError(f"{op}: {rec['file']} defines no {rec['qualname']} (the exported function)")
        syms: Dict[int, Any] = {}
        fakes = [_decode(a, syms, op) for a in rec["args"]]
        compiled = self._compile(jit_fn, *fakes, options=rec["options"]) if rec["options"] is not None else \
            self._compile(jit_fn, *fakes)
        got = self._loaded[prefix] = LoadedFunction(rec, jit_fn, compiled, fakes, self._path)
        return got

    __getitem__ = __getattr__


def load_module(file_path: str, *, enable_tvm_ffi: bool = False, compile_fn: Optional[Callable[..., Any]] = None,
                where: str = "") -> LoadedModule:
    """``cute.runtime.load_module``: a cutelab export (an object file or a shared library linked from
    them); a module CuTe DSL exported, or any other file, is refused naming why."""
    op = f"cute.runtime.load_module({file_path!r})"
    at = f" ({where})" if where else ""
    try:
        with open(file_path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise LaunchError(f"{op}{at}: cannot read the module: {e}") from None
    recs = _records(data)
    if not recs:
        signs = _cute_dsl_signs(data)
        if signs:
            raise LaunchError(f"{op}{at}: this module was exported by CuTe DSL, not by cutelab (it has "
                              f"{', '.join(signs[:3])}: host code of CuTe DSL's MLIR pipeline calling its runtime "
                              f"library, and a compiled GPU binary); cutelab cannot run it. Run the program that "
                              f"exported it under cutelab (cutelab run) to export it again")
        raise LaunchError(f"{op}{at}: no cutelab export found in the file (an export_to_c object, or a shared "
                          f"library linked from them, carries a {_SECTION} section)")
    bad = [r.get("format") for r in recs if r.get("format") != FORMAT]
    if bad:
        raise LaunchError(f"{op}{at}: the module was exported in the format {bad[0]!r}; this cutelab reads "
                          f"{FORMAT!r}")
    if compile_fn is None:  # (this module imports no cute.compile of its own: launch/api imports it)
        raise LaunchError(f"{op}: no compile function given (cute.runtime.load_module passes cute.compile)")
    return LoadedModule(file_path, recs, enable_tvm_ffi, compile_fn)
