# The launch memo on real torch tensors (CPU build), with the stand-in
# Triton of this directory: `python realtorch.py main [N]` with a Python that has
# torch. tests/integration/test_fastpath.sh runs it when TRLAT_TORCH_PYTHON
# names one, with the fast path off, on and in verify mode, and compares the
# launches. Covers the direct calls of torch's getters and data_ptr
# (fastpath/args.c), an instance attribute shadowing data_ptr, and the type
# watcher that turns the direct calls off.
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path = [d for d in sys.path if os.path.abspath(d or ".") != HERE]  # the real torch, not the stand-in
import torch  # noqa: E402

# no CUDA here: builtins stand in for the device and stream reads
torch._C._cuda_getDevice = int  # int() -> 0
torch.cuda.current_device = torch._C._cuda_getDevice
torch._C._cuda_getCurrentRawStream = abs  # abs(0) -> 0
sys.path.insert(0, HERE)
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

N = int(sys.argv[2]) if len(sys.argv) > 2 else 10


@triton.jit
def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
    pass


class Sub(torch.Tensor):
    pass


def main():
    x = torch.zeros(4096)
    h = torch.zeros(64, dtype=torch.float16)
    i = torch.zeros(64, dtype=torch.int32)
    p = torch.nn.Parameter(torch.zeros(64))
    s = torch.zeros(64)
    for r in range(N):
        if r == 3:
            s.data_ptr = x.data_ptr  # an instance attribute shadows TensorBase.data_ptr (for Triton too)
        elif r == 6:
            del s.data_ptr
        add_kernel[(1, )](s, x, x, 64, BLOCK=64)
        for a, b in ((x, x), (h, x), (i, h), (p, x), (x[1:], x), (x[4:], p), (x.as_subclass(Sub), x)):
            add_kernel[lambda m: (triton.cdiv(a.numel(), m["BLOCK"]), )](a, b, x, 64 + r, BLOCK=64)
        if r == N // 2:
            # a property on torch.Tensor replaces TensorBase's getter: the
            # type watcher turns the direct call off; Triton reads it too
            torch.Tensor.dtype = property(lambda self: torch.float16)
    del torch.Tensor.dtype
    for r in range(N):
        add_kernel[(2, )](x, h, i, 64 + r, BLOCK=64)
    print("realtorch done")


main()
