# torch._C._StaticCudaLauncher (torch/csrc/inductor/static_cuda_launcher.cpp
# in torch 2.11), in Python over the fake driver: _load_kernel, and
# _launch_kernel parsing "KiiiiisOK", launching nothing when gridX * gridY
# * gridZ <= 0 (C ints), making the primary context current when none is,
# converting each argument by its type character into an 8-byte slot
# ('O': an int, None, or data_ptr() that cuPointerGetAttribute must know)
# and calling cuLaunchKernel(function, grid, 32 * num_warps, 1, 1, shared,
# stream, slots, NULL), raising RuntimeError("CUDA driver error: ...") when
# a driver call fails. Not torch's code: a model of it, for trlat's CPU
# tests. FAKE_STATIC_LAUNCH_SKEW=N packs an 'i' argument of N to 999 one
# higher (a launcher that does what no memoized block says, once its values
# grow: verify mode must notice).
import ctypes
import os
import struct

_cuda = ctypes.CDLL("libcuda.so.1")
_launch = _cuda.cuLaunchKernel  # dlsym, as torch's NVRTC stub finds it
_launch.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
_ptr_attr = _cuda.cuPointerGetAttribute
_ptr_attr.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64]
_ctx_current = _cuda.cuCtxGetCurrent
_ctx_current.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
_err = _cuda.cuGetErrorString
_err.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
CU_POINTER_ATTRIBUTE_DEVICE_POINTER = 3
_SKEW = int(os.environ.get("FAKE_STATIC_LAUNCH_SKEW") or 0)

_functions = {}  # cubin path -> function handle: what a module load would return


def _check(rc):
    if rc:
        s = ctypes.c_char_p()
        msg = s.value.decode() if _err(rc, ctypes.byref(s)) == 0 and s.value else "unknown error"
        raise RuntimeError("CUDA driver error: " + msg)


def _c_int(v):
    v = v.__index__()
    if not -2**31 <= v < 2**31:
        raise OverflowError("signed integer is greater than maximum")
    return v


def _unpack_long(v):
    v = v.__index__()
    if not -2**63 <= v < 2**63:
        raise RuntimeError("Overflow when unpacking long long")
    return v


def _unpack_u64(v):
    v = v.__index__()
    if v < 0 or v >= 2**64:
        raise OverflowError("can't convert negative int to unsigned")
    return v


def _pointer(obj):
    if isinstance(obj, int):
        return _unpack_u64(obj)
    if obj is None:
        return 0
    dp = getattr(obj, "data_ptr", None)
    if dp is None:
        raise RuntimeError("Pointer argument must be either uint64 or have data_ptr method")
    p = dp()
    if not isinstance(p, int):
        raise RuntimeError("data_ptr method of Pointer object must return 64-bit int")
    if not p:
        return 0
    out = ctypes.c_uint64()
    _check(_ptr_attr(ctypes.byref(out), CU_POINTER_ATTRIBUTE_DEVICE_POINTER, p))
    return out.value


def _slot(ty, v):
    if ty == "O":
        return struct.pack("<Q", _pointer(v))
    if ty == "i":
        v = _unpack_long(v)
        v += 1 if _SKEW and _SKEW <= v < 1000 else 0
        return struct.pack("<i", ((v + 2**31) % 2**32) - 2**31) + bytes(4)
    if ty == "l":
        return struct.pack("<q", _unpack_long(v))
    if ty == "K":
        return struct.pack("<Q", _unpack_u64(v))
    if ty == "f":
        return struct.pack("<f", float(v)) + bytes(4)
    if ty == "d":
        return struct.pack("<d", float(v))
    raise RuntimeError("Unknown type passed in: " + ty)


class _StaticCudaLauncher:

    @staticmethod
    def _load_kernel(cubin_path, func_name, shared, device):
        return _functions[cubin_path], 32, 0

    @staticmethod
    def _launch_kernel(function, grid_x, grid_y, grid_z, num_warps, shared, arg_tys, args, stream):
        function = function.__index__() % 2**64
        gx, gy, gz, nw, sh = (_c_int(v) for v in (grid_x, grid_y, grid_z, num_warps, shared))
        stream = stream.__index__() % 2**64
        if not isinstance(arg_tys, str) or not isinstance(args, tuple):
            raise TypeError("_launch_kernel: arg_tys must be a str and args a tuple")
        prod = ((gx * gy * gz + 2**31) % 2**32) - 2**31
        if prod <= 0:
            return None
        ctx = ctypes.c_void_p()
        _check(_ctx_current(ctypes.byref(ctx)))
        if not ctx.value:
            raise RuntimeError("the stand-in has no primary context to make current")
        if len(args) != len(arg_tys):
            raise RuntimeError("Mismatch between number of argument types and provided arguments")
        storage = [ctypes.create_string_buffer(_slot(t, v), 8) for t, v in zip(arg_tys, args)]
        params = (ctypes.c_void_p * max(1, len(storage)))(*[ctypes.addressof(b) for b in storage])
        _check(_launch(function, gx, gy, gz, 32 * nw, 1, 1, sh, stream, params if storage else None, None))
        return None


_StaticCudaLauncher.__module__ = "torch._C"
