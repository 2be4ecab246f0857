# A stand-in for the parts of torch Triton's run() and trlat's memo touch:
# Tensor (dtype, is_cuda, data_ptr()), nn.Parameter, the current device and
# the current raw stream. No memory: a tensor is an address and a dtype.
import ctypes
import os
import types


class dtype:

    def __init__(self, name, size):
        self.name, self.itemsize = name, size

    def __repr__(self):
        return "torch." + self.name


float32 = dtype("float32", 4)
float16 = dtype("float16", 2)
int32 = dtype("int32", 4)
int64 = dtype("int64", 8)
int8 = dtype("int8", 1)
bool_ = dtype("bool", 1)

_next = [0x7f0000000000]


class Tensor:

    def __init__(self, n=16, dtype=float32, device="cuda", ptr=None):
        self.dtype = dtype
        self.is_cuda = device == "cuda"
        if ptr is None:
            ptr = _next[0]
            _next[0] += (n * dtype.itemsize + 511) // 512 * 512
        self._ptr = ptr
        self.n = n

    def data_ptr(self):
        return self._ptr

    @property
    def shape(self):
        return Size((self.n, ))

    def stride(self):
        return (1, )

    def view_at(self, offset):
        """A view starting offset elements in (a misaligned view for odd offsets)."""
        return Tensor(self.n - offset, self.dtype, "cuda" if self.is_cuda else "cpu",
                      self._ptr + offset * self.dtype.itemsize)


class Size(tuple):
    """torch.Size: a tuple subclass (tensor.shape)."""


def empty(n, dtype=float32, device="cuda"):
    return Tensor(n, dtype, device)


nn = types.ModuleType("torch.nn")


class Parameter(Tensor):
    pass


nn.Parameter = Parameter

_state = {"device": 0, "stream": {0: 0}}


_device_delay = float(os.environ.get("FAKE_DEVICE_DELAY_S") or 0)


def _cuda_getDevice():
    if _device_delay:  # a slow read, to see which part of a call a time covers
        import time
        time.sleep(_device_delay)
    return _state["device"]


def _cuda_getCurrentRawStream(device):
    return _state["stream"].get(device, 0)


def _set_stream(s, device=0):
    _state["stream"][device] = s
    if _c10:
        _c10.fake_c10_set_stream(device, ctypes.c_ulonglong(s))


def _set_device(d, deferred=False):
    # deferred: as torch.cuda.set_device on a device without a context yet
    # (torch notes a target device; the current context stays the old one's)
    _state["device"] = d
    if _c10:
        _c10.fake_c10_set_device(d, int(deferred))


# FAKE_C10_LIB: tests/fake/fake_c10.c, torch's C++ side of the two reads
# above, kept in step with them (the fast path may call it instead)
_c10 = ctypes.CDLL(os.environ["FAKE_C10_LIB"]) if os.environ.get("FAKE_C10_LIB") else None


def c10_calls(what="fake_c10_calls"):
    return ctypes.c_ulonglong.in_dll(_c10, what).value if _c10 else 0


def current_device():
    return _cuda_getDevice()


cuda = types.ModuleType("torch.cuda")
cuda.current_device = current_device
_C = types.ModuleType("torch._C")
_C._cuda_getDevice = _cuda_getDevice
_C._cuda_getCurrentRawStream = _cuda_getCurrentRawStream
_C._profiler = types.ModuleType("torch._C._profiler")


class _RecordFunctionFast:
    """The profiler's record of one call (Inductor's run() enters one per
    launch while the profiler is on)."""
    records = []

    def __init__(self, name, args, kwargs):
        self.name = name

    def __enter__(self):
        _RecordFunctionFast.records.append(self.name)

    def __exit__(self, *exc):
        pass


_C._profiler._RecordFunctionFast = _RecordFunctionFast
version = types.ModuleType("torch.version")
version.hip = None

from ._static_cuda_launcher import _StaticCudaLauncher  # noqa: E402

_C._StaticCudaLauncher = _StaticCudaLauncher
import sys  # noqa: E402

sys.modules["torch._C"] = _C  # `from torch._C import ...`, as the static launcher imports it
