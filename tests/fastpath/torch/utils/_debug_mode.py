# torch.utils._debug_mode: get_active_debug_mode(), the innermost DebugMode
# on the dispatch-mode stack (None when none is active; a count read first).
_ACTIVE_DEBUG_MODE_COUNT = 0
_stack = []


class DebugMode:

    def __init__(self):
        self.calls = []

    def __enter__(self):
        global _ACTIVE_DEBUG_MODE_COUNT
        _ACTIVE_DEBUG_MODE_COUNT += 1
        _stack.append(self)
        return self

    def __exit__(self, *exc):
        global _ACTIVE_DEBUG_MODE_COUNT
        _ACTIVE_DEBUG_MODE_COUNT -= 1
        _stack.remove(self)

    def record_triton_kernel(self, kernel_name, kwargs):
        call = _Call(kernel_name, kwargs)
        self.calls.append(call)
        return call


class _Call:

    def __init__(self, name, kwargs):
        self.name, self.kwargs, self.finalized = name, kwargs, False

    def finalize(self, device_interface):
        self.finalized = True


def get_active_debug_mode():
    if not _ACTIVE_DEBUG_MODE_COUNT:
        return None
    return _stack[-1] if _stack else None
