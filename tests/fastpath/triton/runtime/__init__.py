from .jit import JITFunction, KernelInterface, jit  # noqa: F401
