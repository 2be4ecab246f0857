# runtime/driver.py + backends/driver.py GPUDriver: driver.active with
# get_current_device (torch.cuda.current_device) and get_current_stream
# (torch._C._cuda_getCurrentRawStream).
import torch


class _Active:

    def __init__(self):
        self.get_current_device = torch.cuda.current_device
        self.get_current_stream = torch._C._cuda_getCurrentRawStream
        from ..backends.nvidia.driver import CudaLauncher
        self.launcher_cls = CudaLauncher


class DriverConfig:

    def __init__(self):
        self._active = None

    @property
    def active(self):
        if self._active is None:
            self._active = _Active()
        return self._active


driver = DriverConfig()
