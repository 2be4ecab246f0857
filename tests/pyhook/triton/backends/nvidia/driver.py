# Triton's CUDA launcher: CudaLauncher.__call__(gridX, gridY, gridZ, stream,
# function, *args) launches through the fake driver.
from ...runtime.driver import launch, load  # noqa: F401


class CudaLauncher(object):

    def __call__(self, gridX, gridY, gridZ, stream, function, *args):
        launch(function, (gridX, gridY, gridZ))
