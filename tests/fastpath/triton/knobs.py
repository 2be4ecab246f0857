# knobs.py (3.6): runtime.debug and compilation.instrumentation_mode are
# plain class attributes read on every run(); the launch hooks are
# HookChains (empty by default, never None).


class HookChain:

    def __init__(self, reversed=False):
        self.calls = []
        self.reversed = reversed

    def add(self, func):
        if func not in self.calls:
            self.calls.append(func)

    def remove(self, func):
        if func in self.calls:
            self.calls.remove(func)

    def __call__(self, *args, **kwargs):
        for call in self.calls if not self.reversed else reversed(self.calls):
            call(*args, **kwargs)


class runtime_knobs:
    interpret = False
    debug = False
    launch_enter_hook = HookChain()
    launch_exit_hook = HookChain(reversed=True)
    jit_cache_hook = None
    jit_post_compile_hook = None


class compilation_knobs:
    instrumentation_mode = ""


runtime = runtime_knobs()
compilation = compilation_knobs()
