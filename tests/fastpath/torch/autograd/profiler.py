# torch.autograd.profiler: _is_profiler_enabled, a module global the
# profiler's context manager sets while it records.
_is_profiler_enabled = False


class profile:

    def __enter__(self):
        global _is_profiler_enabled
        _is_profiler_enabled = True
        return self

    def __exit__(self, *exc):
        global _is_profiler_enabled
        _is_profiler_enabled = False
