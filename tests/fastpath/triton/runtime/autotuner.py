# parts of triton/runtime/autotuner.py (3.6): Heuristics as Triton has it;
# Autotuner only as a class for isinstance (FlagGems' LibEntry asks it)
from .jit import KernelInterface


class Autotuner(KernelInterface):
    pass


class Heuristics(KernelInterface):

    def __init__(self, fn, arg_names, values) -> None:
        self.fn = fn
        self.values = values
        self.arg_names = arg_names

    def run(self, *args, **kwargs):
        for v, heur in self.values.items():
            kwargs[v] = heur({**dict(zip(self.arg_names, args)), **kwargs})
        return self.fn.run(*args, **kwargs)


def heuristics(values):

    def decorator(fn):
        return Heuristics(fn, fn.arg_names, values)

    return decorator
