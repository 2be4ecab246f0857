# torch/_inductor/utils.py, reduced to what the static launcher's run reads.
import torch


def is_rocm():
    return torch.version.hip is not None
