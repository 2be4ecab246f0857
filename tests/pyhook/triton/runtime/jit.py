# JITFunction with Triton 3.x's run contract. The decorated Python function
# stands for the kernel's host-side work: it runs inside run() and returns
# how many times to launch (None: once); it may raise.
import time

from . import driver


class KernelInterface:

    def warmup(self, *args, grid, **kwargs):
        return self.run(grid=grid, warmup=True, *args, **kwargs)

    def run(self, *args, grid, warmup, **kwargs):
        raise NotImplementedError("run not implemented")

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(grid=grid, warmup=False, *args, **kwargs)


class JITFunction(KernelInterface):

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = fn.__name__
        self.function = None

    def run(self, *args, grid, warmup, **kwargs):
        n = self.fn(*args, **kwargs)
        if self.function is None:
            self.function = driver.load(self.__name__)
        if warmup:
            return self
        if callable(grid):
            grid = grid(kwargs)
        for _ in range(1 if n is None else n):
            driver.launch(self.function, grid)
        spin_after_us = kwargs.get("spin_after_us", 0)  # a slow return path (tests)
        if spin_after_us:
            end = time.perf_counter() + spin_after_us * 1e-6
            while time.perf_counter() < end:
                pass
        return self


def jit(fn):
    return JITFunction(fn)
