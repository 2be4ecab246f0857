# tools/tensor_descriptor.py (3.6): the host-side tensor descriptor a
# kernel's tensordesc parameter takes; the launcher turns it into a
# CUtensorMap (backends/nvidia/driver.py make_tensordesc_arg).
from dataclasses import dataclass
from typing import Any, List


@dataclass
class TensorDescriptor:
    base: Any
    shape: List[int]
    strides: List[int]
    block_shape: List[int]
    padding: str = "zero"

    def __post_init__(self):
        rank = len(self.shape)
        assert len(self.strides) == rank, f"rank mismatch: {self}"
        assert len(self.block_shape) == rank, f"rank mismatch: {self}"
        assert rank > 0, "rank must not be zero"
        assert rank <= 5, "rank cannot be more than 5"
        elem_bytes = self.base.dtype.itemsize
        for stride in self.strides[:-1]:
            assert (stride * elem_bytes) % 16 == 0, "strides must be 16-byte aligned"
        assert self.strides[-1] == 1, "Last dimension must be contiguous"
        assert self.padding == "zero" or self.padding == "nan", "Illegal value for padding"

    @staticmethod
    def from_tensor(tensor: Any, block_shape: List[int], padding="zero"):
        return TensorDescriptor(tensor, tensor.shape, tensor.stride(), block_shape, padding)
