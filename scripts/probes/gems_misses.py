"""Which FlagGems calls miss the fast path, and what changed in their
arguments: runs tests/gpu/real_models.py's gems decode with LibEntry.run
wrapped to print, before each call, the kernel, whether LibEntry's own
cache had its key (a new entry after the call: LIBMISS) and a short form
of each argument. Under TRLAT_FASTPATH_DEBUG=1 trlat's "memoized" lines
land between them on stderr, so each capture can be read against the
call that made it.

  PYTHONUNBUFFERED=1 TRLAT_FASTPATH=1 TRLAT_FASTPATH_DEBUG=1 LD_PRELOAD=libtrlat.so \\
      python3 scripts/probes/gems_misses.py STEPS 2> misses.txt"""
import importlib
import os
import runpy
import sys

# flag_gems.utils.libentry is also the name of a decorator there
libentry = importlib.import_module("flag_gems.utils.libentry")

orig = libentry.LibEntry.run


def short(a):
    if hasattr(a, "data_ptr"):
        st = a.stride() if callable(getattr(a, "stride", None)) else getattr(a, "strides", None)
        return f"{type(a).__name__}[{a.dtype},{tuple(getattr(a, 'shape', ()))},{tuple(st or ())},a{a.data_ptr() % 16}]"
    if type(a).__name__ == "TensorDescriptor":
        return f"TD[{tuple(a.shape)},{tuple(a.strides)},{tuple(a.block_shape)}]"
    if isinstance(a, (int, float, bool, str, type(None))):
        return repr(a)
    return type(a).__name__


def run(self, *args, **kwargs):
    n0 = sum(len(c) for c in self.kernel_cache)
    kw = {k: (type(v).__name__ if k == "grid" and callable(v) else short(v)) for k, v in kwargs.items()}
    sys.stderr.write(f"CALL {self.jit_function.__name__} ({', '.join(map(short, args))}) {kw}\n")
    r = orig(self, *args, **kwargs)
    if sum(len(c) for c in self.kernel_cache) != n0:
        sys.stderr.write(f"LIBMISS {self.jit_function.__name__}\n")
    return r


libentry.LibEntry.run = run
here = os.path.dirname(os.path.abspath(__file__))
sys.argv = ["real_models.py", "gems", sys.argv[1] if len(sys.argv) > 1 else "30"]
runpy.run_path(os.path.join(here, "..", "..", "tests", "gpu", "real_models.py"), run_name="__main__")
