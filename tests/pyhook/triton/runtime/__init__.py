from .autotuner import Autotuner, Heuristics, autotune, heuristics  # noqa: F401
from .jit import JITFunction, KernelInterface, jit  # noqa: F401
