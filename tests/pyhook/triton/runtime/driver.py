# The fake driver, reached as Triton's launcher reaches the real one: dlsym
# on libcuda.so.1 (ctypes), the GIL released around each call.
import ctypes


class LaunchConfig(ctypes.Structure):
    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint), ("gridDimZ", ctypes.c_uint),
                ("blockDimX", ctypes.c_uint), ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p), ("attrs", ctypes.c_void_p),
                ("numAttrs", ctypes.c_uint)]


_cuda = ctypes.CDLL("libcuda.so.1")
_get_function = _cuda.cuModuleGetFunction
_get_function.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p, ctypes.c_char_p]
_launch_ex = _cuda.cuLaunchKernelEx
_launch_ex.argtypes = [ctypes.POINTER(LaunchConfig), ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]


def load(name):
    f = ctypes.c_void_p()
    rc = _get_function(ctypes.byref(f), ctypes.c_void_p(0x1000), name.encode())
    if rc != 0:
        raise RuntimeError("cuModuleGetFunction(%s) = %d" % (name, rc))
    return f


def launch(function, grid):
    g = tuple(grid) + (1, 1)
    cfg = LaunchConfig(g[0], g[1], g[2], 128, 1, 1, 0, None, None, 0)
    rc = _launch_ex(ctypes.byref(cfg), function, None, None)
    if rc != 0:
        raise RuntimeError("cuLaunchKernelEx = %d" % rc)
