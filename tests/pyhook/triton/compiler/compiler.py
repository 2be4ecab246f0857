# CompiledKernel with Triton 3.6's calling shape: compiled[grid](*args,
# stream=None) makes a runner that calls self.run (the backend's launcher)
# with the grid, stream, function and launch metadata before the arguments.


class CompiledKernel:

    def __init__(self, name):
        self.name = name
        self.function = None
        self._run = None

    def _init_handles(self):
        if self._run is not None:
            return
        from ..backends.nvidia import driver  # loaded with the first kernel, as Triton's is
        self._run = driver.CudaLauncher()
        self.function = driver.load(self.name)

    @property
    def run(self):
        self._init_handles()
        return self._run

    def __getitem__(self, grid):
        self._init_handles()

        def runner(*args, stream=None):
            self.run(grid[0], grid[1], grid[2], stream, self.function, None, None, None, None, *args)

        return runner


def compile(name):
    return CompiledKernel(name)
