# A stand-in for Triton in trlat's CPU tests: the same module names and the
# same run(self, *args, grid, warmup, **kwargs) contract, launching through
# the fake libcuda.so.1 with ctypes. FAKE_TRITON_VERSION overrides the
# version (the refusal test).
import os

__version__ = os.environ.get("FAKE_TRITON_VERSION", "3.6.0")

from .runtime import Autotuner, Heuristics, JITFunction, KernelInterface, autotune, heuristics, jit  # noqa: E402,F401
from . import language  # noqa: E402,F401
