# The launch memo on real torch tensors (CPU build), with the stand-in
# Triton of this directory: `python realtorch.py main [N]` with a Python that has
# torch. tests/integration/test_fastpath.sh runs it when TRLAT_TORCH_PYTHON
# names one, with the fast path off, on and in verify mode, and compares the
# launches. Covers the direct calls of torch's getters and data_ptr
# (fastpath/key_args.c), an instance attribute shadowing data_ptr, the type
# watcher that turns the direct calls off, and the tensors whose fields the
# direct reader (fastpath/torch/tensor_direct.c) must read exactly or refuse.
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
    t = torch.zeros(64)
    t.tag = "other"  # an instance attribute, not data_ptr
    q = torch.nn.Parameter(torch.zeros(64))
    for r in range(N):
        if r == 3:
            s.data_ptr = x.data_ptr  # an instance attribute shadows TensorBase.data_ptr (for Triton too)
            q.data_ptr = h.data_ptr
        elif r == 6:
            del s.data_ptr
        add_kernel[(1, )](s, x, x, 64, BLOCK=64)
        add_kernel[(1, )](t, q, x, 64, BLOCK=64)
        for a, b in ((x, x), (h, x), (i, h), (p, x), (x[1:], x), (x[4:], p), (x.as_subclass(Sub), x)):
            add_kernel[lambda m: (triton.cdiv(a.numel(), m["BLOCK"]), )](a, b, x, 64 + r, BLOCK=64)
        if r == N // 2:
            # a property on torch.Tensor replaces TensorBase's getter: the
            # type watcher turns the direct call off; Triton reads it too
            torch.Tensor.dtype = property(lambda self: torch.float16)
    del torch.Tensor.dtype
    for r in range(N):
        add_kernel[(2, )](x, h, i, 64 + r, BLOCK=64)
    fields()
    print("realtorch done")


class PtrMode(torch.overrides.TorchFunctionMode):
    """A mode that answers data_ptr() itself: Triton launches its answer."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is torch.Tensor.data_ptr:
            return 4096
        return func(*args, **(kwargs or {}))


def fields():
    # Each call's tensors are new, so a pointer read from the wrong place
    # (or a copy-on-write tensor read without being materialized, as
    # data_ptr() does) changes the launch. All stay alive: a freed address
    # reused would name two tensors alike in the logs.
    base = torch.arange(256, dtype=torch.float32)
    x = torch.zeros(64)
    keep = []
    for r in range(N):
        view = base[r:]  # a storage offset that moves
        empty = torch.empty(0)  # data_ptr() is 0
        src = torch.arange(64.0)
        cow = torch._lazy_clone(src)  # data_ptr() copies it first (src keeps the shared buffer)
        swapped = torch.zeros(64)
        keep.append(swapped.detach())  # the storage .data replaces
        swapped.data = torch.ones(32 + r, dtype=torch.float16)  # .data swaps the fields under the object
        retyped = base.view(torch.int32)  # the same storage as another dtype
        keep += [view, empty, src, cow, swapped, retyped]
        add_kernel[(1, )](view, empty, cow, 64, BLOCK=64)
        add_kernel[(1, )](swapped, retyped, src, 64, BLOCK=64)  # src: its buffer unless cow copied
        with PtrMode():
            add_kernel[(1, )](x, view, x, 64, BLOCK=64)


main()
