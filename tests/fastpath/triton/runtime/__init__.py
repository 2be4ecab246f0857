# _allocation before jit: trlat's hook installer polls at every import that
# follows jit's, and the tests count on it waiting for the first kernel load
from . import _allocation  # noqa: F401
from .jit import JITFunction, KernelInterface, jit  # noqa: F401
