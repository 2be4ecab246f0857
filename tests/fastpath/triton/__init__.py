# A stand-in for Triton 3.6 in trlat's CPU tests of the launch memo: the
# parts of runtime/jit.py, knobs.py, compiler.py and the CUDA launcher
# (backends/nvidia/driver.py) that decide what a call launches, with the
# same names, attributes and semantics, launching through the fake
# libcuda.so.1 with ctypes. Not Triton's code: a model of it, checked
# against Triton 3.6's sources (cited in each file).
__version__ = "3.6.0"

from . import knobs  # noqa: E402,F401
from . import language  # noqa: E402,F401
from .runtime.jit import JITFunction, KernelInterface, constexpr_function, jit  # noqa: E402,F401
from .runtime._allocation import set_allocator  # noqa: E402,F401


# triton/__init__.py (3.6)
@constexpr_function
def cdiv(x: int, y: int):
    return (x + y - 1) // y


@constexpr_function
def next_power_of_2(n: int):
    """Return the smallest power of 2 greater than or equal to n"""
    n -= 1
    n |= n >> 1
    n |= n >> 2
    n |= n >> 4
    n |= n >> 8
    n |= n >> 16
    n |= n >> 32
    n += 1
    return n
