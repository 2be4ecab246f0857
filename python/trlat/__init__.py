"""trlat's Python API: switches and asks the libtrlat.so already loaded in
this process (`trlat run -- python ...`, or LD_PRELOAD=libtrlat.so). It
never loads a copy of its own; without trlat in the process every call
raises NotLoaded, which says how to start it.

    import trlat
    trlat.pause()               # stop recording (warm-up, a phase to skip)
    trlat.resume()
    with trlat.paused(): ...
    trlat.fastpath(False)       # every Triton call through Triton again
    with trlat.region("step"):  # the report groups launches by region
        ...
    path = trlat.flush()        # the report of what was recorded so far
"""
import contextlib
import ctypes
import os
import threading

__all__ = ["NotLoaded", "active", "pause", "resume", "paused", "fastpath", "region", "flush", "report_path",
           "library_path"]


class NotLoaded(RuntimeError):
    """libtrlat.so is not in this process."""


_lib = None


def _api():
    global _lib
    if _lib is None:
        lib = ctypes.CDLL(None)  # the process's own symbols: the preloaded library's among them
        try:
            lib.trlat_api_active
        except AttributeError:
            raise NotLoaded("trlat is not loaded in this process: start the program with "
                            "`trlat run -- python ...` or LD_PRELOAD=/path/to/libtrlat.so") from None
        for name, args in (("trlat_api_active", []), ("trlat_api_profiling", [ctypes.c_int]),
                           ("trlat_api_fastpath", [ctypes.c_int]), ("trlat_api_flush", []),
                           ("trlat_api_report_path", [ctypes.c_char_p, ctypes.c_ulong]),
                           ("trlat_api_region_push", [ctypes.c_char_p]), ("trlat_api_region_pop", [])):
            f = getattr(lib, name)
            f.argtypes, f.restype = args, ctypes.c_int
        _lib = lib
    return _lib


def active():
    """True when trlat records in this process (False under TRLAT_DISABLE=1)."""
    return _api().trlat_api_active() == 1


def _profiling(on):
    before = _api().trlat_api_profiling(1 if on else 0)
    if before < 0:
        raise NotLoaded("trlat is loaded but disabled in this process (TRLAT_DISABLE=1)")
    return bool(before)


def pause():
    """Stops recording on every thread (launches still reach the driver, the
    fast path still serves). Returns whether it was recording."""
    return _profiling(False)


def resume():
    """Records again. Returns whether it was recording."""
    return _profiling(True)


@contextlib.contextmanager
def paused():
    """Not recorded inside the block; as before after it."""
    was = pause()
    try:
        yield
    finally:
        if was:
            resume()


def fastpath(on):
    """The fast path on or off from here on. Returns its state before, or
    None when it did not start in this process (TRLAT_FASTPATH=0)."""
    before = _api().trlat_api_fastpath(1 if on else 0)
    return None if before < 0 else bool(before)


class region(contextlib.ContextDecorator):
    """Launches made on this thread inside the block (or the decorated
    function) are grouped under `name` in the report; regions nest, the
    innermost counts. NVTX ranges (torch.cuda.nvtx.range) are regions too
    under `trlat run`."""

    def __init__(self, name):
        self.name = str(name).encode("utf-8", "surrogateescape")
        self._open = threading.local()  # per thread: whether each enter pushed (a decorator may recurse)

    def __enter__(self):
        pushed = _api().trlat_api_region_push(self.name) >= 0
        if not pushed and not active():
            raise NotLoaded("trlat is loaded but disabled in this process (TRLAT_DISABLE=1)")
        self._open.__dict__.setdefault("stack", []).append(pushed)
        return self

    def __exit__(self, *exc):
        if self._open.stack.pop():
            _api().trlat_api_region_pop()
        return False


def report_path():
    """The path of the report this process wrote last, or None."""
    buf = ctypes.create_string_buffer(4096)
    n = _api().trlat_api_report_path(buf, len(buf))
    return buf.value.decode("utf-8", "surrogateescape") if n >= 0 else None


def flush():
    """Writes the report of what was recorded so far now (the exit's
    replaces it) and returns its path; None when none was written (nothing
    launched yet, or the write failed: said on stderr)."""
    return report_path() if _api().trlat_api_flush() == 0 else None


def library_path():
    """The libtrlat.so of this install (to preload by hand), or None."""
    from .__main__ import cli_path
    cli = cli_path()
    lib = os.path.join(os.path.dirname(cli), "libtrlat.so") if cli else None
    return lib if lib and os.path.exists(lib) else None
