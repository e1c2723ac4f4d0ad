"""cutlass_call's XLA custom call: one typed-FFI handler, written in Python through ctypes.

XLA calls a registered FFI handler with a call frame (``xla/ffi/api/c_api.h``: the operand and
result buffers, each a data pointer with its dims, and the call's attributes). cutelab compiles no
XLA module, so the handler is a ctypes callback into Python: it reads the frame, finds the call
named by its ``cutelab_call`` attribute in :data:`CALLS` (made when the JAX function was traced)
and runs it on the buffers. Because the target is an ordinary custom call, it works under
``jax.jit``, ``shard_map``, custom_partitioning and ``jax.export`` (whose serialized form names the
target and the attribute; it runs in the process that made it, where the call is registered).

Buffers: on the CPU (the emulated CUDA device, or any machine without one) a buffer is host memory,
viewed as a numpy array without a copy, so the kernel writes XLA's result buffers in place. On a GPU
platform the buffer is device memory: it is handed on as a ``__cuda_array_interface__`` view with
XLA's stream, for cutelab's CUDA launch (that path is not exercised by cutelab's CPU tests).
"""

from __future__ import annotations

import ctypes
import threading
import traceback
from typing import Any, Callable, Dict, List, Optional, Tuple

TARGET = "cutelab_cutlass_call"  #: the custom-call target's name
ATTR = "cutelab_call"  #: the attribute naming the call (a key of CALLS)

_c = ctypes
_EXECUTE = 3  # XLA_FFI_ExecutionStage_EXECUTE
_METADATA = 1  # XLA_FFI_Extension_Metadata
_ATTR_STRING = 4  # XLA_FFI_AttrType_STRING
_BUFFER = 1  # XLA_FFI_ArgType_BUFFER / XLA_FFI_RetType_BUFFER
_ERR_INTERNAL = 13


class _ExtBase(_c.Structure):
    _fields_ = [("struct_size", _c.c_size_t), ("type", _c.c_int), ("next", _c.c_void_p)]


class _ApiVersion(_c.Structure):
    _fields_ = [("struct_size", _c.c_size_t), ("extension_start", _c.c_void_p),
                ("major", _c.c_int), ("minor", _c.c_int)]


class _Metadata(_c.Structure):
    _fields_ = [("struct_size", _c.c_size_t), ("api_version", _ApiVersion), ("traits", _c.c_uint32),
                ("state_type_id", _c.c_int64)]


class _MetadataExt(_c.Structure):
    _fields_ = [("base", _ExtBase), ("metadata", _c.POINTER(_Metadata))]


class _ByteSpan(_c.Structure):
    _fields_ = [("ptr", _c.c_void_p), ("len", _c.c_size_t)]


class _Buffer(_c.Structure):
    _fields_ = [("struct_size", _c.c_size_t), ("extension_start", _c.c_void_p), ("dtype", _c.c_int),
                ("data", _c.c_void_p), ("rank", _c.c_int64), ("dims", _c.POINTER(_c.c_int64))]


class _List(_c.Structure):  # XLA_FFI_Args and XLA_FFI_Rets
    _fields_ = [("struct_size", _c.c_size_t), ("extension_start", _c.c_void_p), ("size", _c.c_int64),
                ("types", _c.POINTER(_c.c_int)), ("items", _c.POINTER(_c.c_void_p))]


class _Attrs(_c.Structure):
    _fields_ = [("struct_size", _c.c_size_t), ("extension_start", _c.c_void_p), ("size", _c.c_int64),
                ("types", _c.POINTER(_c.c_int)), ("names", _c.POINTER(_c.POINTER(_ByteSpan))),
                ("attrs", _c.POINTER(_c.c_void_p))]


class _CallFrame(_c.Structure):
    _fields_ = [("struct_size", _c.c_size_t), ("extension_start", _c.POINTER(_ExtBase)), ("api", _c.c_void_p),
                ("ctx", _c.c_void_p), ("stage", _c.c_int), ("args", _List), ("rets", _List), ("attrs", _Attrs),
                ("future", _c.c_void_p)]


class _ErrorArgs(_c.Structure):
    _fields_ = [("struct_size", _c.c_size_t), ("extension_start", _c.c_void_p), ("message", _c.c_char_p),
                ("errc", _c.c_int)]


class _StreamArgs(_c.Structure):
    _fields_ = [("struct_size", _c.c_size_t), ("extension_start", _c.c_void_p), ("ctx", _c.c_void_p),
                ("stream", _c.c_void_p)]


_FN = _c.CFUNCTYPE(_c.c_void_p, _c.c_void_p)  # XLA_FFI_Error* f(XLA_FFI_*_Args*)


class _Api(_c.Structure):  # the head of XLA_FFI_Api, up to the functions used here
    _fields_ = [("struct_size", _c.c_size_t), ("extension_start", _c.c_void_p), ("api_version", _ApiVersion),
                ("internal_api", _c.c_void_p), ("Error_Create", _FN), ("Error_GetMessage", _c.c_void_p),
                ("Error_Destroy", _c.c_void_p), ("Handler_Register", _c.c_void_p), ("Stream_Get", _FN)] + [
                (f, _c.c_void_p) for f in ("Type_Register", "ExecutionContext_Get", "State_Set", "State_Get",
                                           "DeviceMemory_Allocate", "DeviceMemory_Free", "ThreadPool_Schedule",
                                           "ThreadPool_NumThreads", "Future_Create", "Future_SetAvailable",
                                           "Future_SetError", "RunId_Get")] + [("DeviceOrdinal_Get", _FN)]


class _OrdinalArgs(_c.Structure):
    _fields_ = [("struct_size", _c.c_size_t), ("extension_start", _c.c_void_p), ("ctx", _c.c_void_p),
                ("device_ordinal", _c.c_int32)]


class Buffer:
    """One operand or result of a call: its data address, extents, XLA element type (XLA_FFI_DataType)
    and platform ('cpu' or 'cuda')."""

    __slots__ = ("address", "shape", "platform", "xla_dtype", "device")

    def __init__(self, address: int, shape: Tuple[int, ...], platform: str, xla_dtype: int = 0, device: int = 0):
        self.address, self.shape, self.platform, self.xla_dtype = address, shape, platform, xla_dtype
        self.device = device  # the GPU's ordinal (cuda)


#: call key -> fn(buffers_in, buffers_out, stream): what each traced cutlass_call runs
CALLS: Dict[str, Callable[[List[Buffer], List[Buffer], int], None]] = {}
LOCK = threading.RLock()  # calls from several devices' threads run one at a time (the interpreter is not reentrant)


def _error(api: Any, message: str) -> int:
    args = _ErrorArgs(_c.sizeof(_ErrorArgs), None, message.encode("utf-8", "replace"), _ERR_INTERNAL)
    return api.Error_Create(_c.addressof(args)) or 0


def _buffers(lst: _List, platform: str, device: int = 0) -> List[Buffer]:
    out = []
    for i in range(lst.size):
        if lst.types[i] != _BUFFER:
            raise TypeError(f"cutlass_call: operand {i} is not a buffer (FFI type {lst.types[i]})")
        b = _c.cast(lst.items[i], _c.POINTER(_Buffer)).contents
        out.append(Buffer(b.data or 0, tuple(b.dims[d] for d in range(b.rank)), platform, b.dtype, device))
    return out


def _key(attrs: _Attrs) -> Optional[str]:
    for i in range(attrs.size):
        name = attrs.names[i].contents
        if _c.string_at(name.ptr, name.len).decode() == ATTR and attrs.types[i] == _ATTR_STRING:
            s = _c.cast(attrs.attrs[i], _c.POINTER(_ByteSpan)).contents
            return _c.string_at(s.ptr, s.len).decode()
    return None


def _make_handler(platform: str, fixed: Optional[Callable] = None) -> Any:
    """The C handler for platform: it runs fixed, or (None) the call its attribute names in CALLS."""

    def handler(frame_ptr: int) -> int:
        frame = _c.cast(frame_ptr, _c.POINTER(_CallFrame)).contents
        api = _c.cast(frame.api, _c.POINTER(_Api)).contents
        try:
            ext = frame.extension_start
            if ext and ext.contents.type == _METADATA:  # XLA asks which FFI version the handler speaks
                meta = _c.cast(ext, _c.POINTER(_MetadataExt)).contents.metadata.contents
                meta.api_version = _ApiVersion(_c.sizeof(_ApiVersion), None, api.api_version.major,
                                               api.api_version.minor)
                meta.traits = 0
                return 0
            if frame.stage != _EXECUTE:
                return 0
            key = _key(frame.attrs) if fixed is None else None
            run = fixed or (CALLS.get(key) if key is not None else None)
            if run is None:
                return _error(api, f"cutlass_call: no call {key!r} in this process: cutelab runs a cutlass_call "
                                   "only in the process that traced it (a jax.export made elsewhere cannot run here)")
            stream = device = 0
            if platform == "cuda":
                sargs = _StreamArgs(_c.sizeof(_StreamArgs), None, frame.ctx, None)
                err = api.Stream_Get(_c.addressof(sargs))
                if err:
                    return err
                stream = sargs.stream or 0
                if api.struct_size >= _c.sizeof(_Api):  # an XLA new enough to say which GPU
                    oargs = _OrdinalArgs(_c.sizeof(_OrdinalArgs), None, frame.ctx, 0)
                    err = api.DeviceOrdinal_Get(_c.addressof(oargs))
                    if err:
                        return err
                    device = oargs.device_ordinal
            with LOCK:
                run(_buffers(frame.args, platform, device), _buffers(frame.rets, platform, device), stream)
            return 0
        except BaseException as e:  # noqa: BLE001 - every error goes back to XLA, which raises it in the caller
            text = "".join(traceback.format_exception_only(type(e), e)).strip()
            return _error(api, f"cutlass_call failed: {text}")

    return _c.CFUNCTYPE(_c.c_void_p, _c.c_void_p)(handler)


_REGISTERED: Dict[str, Any] = {}  # platform -> the ctypes handler of TARGET (kept alive: XLA holds its address)
_NAMED: List[Any] = []  # the handlers of register_target's targets (kept alive likewise)


def register(platform: str) -> None:
    """Register cutlass_call's handler with XLA for platform ('cpu' or 'cuda'), once."""
    if platform in _REGISTERED:
        return
    _REGISTERED[platform] = _register(TARGET, platform, None)


def register_target(name: str, platform: str, run: Callable[[List[Buffer], List[Buffer], int], None]) -> None:
    """Register the custom-call target name for platform ('cpu' or 'cuda'): XLA's calls run run."""
    _NAMED.append(_register(name, platform, run))


def _register(name: str, platform: str, fixed: Optional[Callable]) -> Any:
    import jax

    fn = _make_handler(platform, fixed)
    ptr = _c.cast(fn, _c.c_void_p).value
    jax.ffi.register_ffi_target(name, jax.ffi.pycapsule(ptr), platform="CUDA" if platform == "cuda" else "cpu")
    return fn


#: XLA_FFI_DataType -> cutelab element type name (c_api.h's enum)
XLA_DTYPES = {1: "Boolean", 2: "Int8", 3: "Int16", 4: "Int32", 5: "Int64", 6: "Uint8", 7: "Uint16", 8: "Uint32",
              9: "Uint64", 10: "Float16", 11: "Float32", 12: "Float64", 16: "BFloat16", 19: "Float8E5M2",
              20: "Float8E4M3FN", 32: "Float4E2M1FN", 33: "Float8E8M0FNU"}
