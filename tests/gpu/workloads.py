"""Triton workloads shared by the GPU tests and benchmarks. Run as a script:
  workloads.py nop N          tritonbench's nop_with_args_kernel N times
  workloads.py nop0 N         the 0-argument nop kernel N times
  workloads.py mix            a few Triton kernels and torch ops; prints output checksums
Prints `us_per_launch=X` for loops (host wall time of the timed loop)."""
import sys
import time

import torch
import triton
import triton.language as tl


@triton.jit
def nop_with_args_kernel(t1, t2, t3, t4, t5, i1, i2, i3, i4, i5, i6, i7, i8, i9,
                         c1: tl.constexpr, c2: tl.constexpr, c3: tl.constexpr,
                         c4: tl.constexpr, c5: tl.constexpr):
    pass


@triton.jit
def nop_kernel():
    pass


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def softmax_kernel(out_ptr, in_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * stride + offs, mask=offs < n_cols, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * stride + offs, num / tl.sum(num, axis=0), mask=offs < n_cols)


def nop_args():
    t = [torch.zeros(16, device="cuda") for _ in range(5)]
    return t + list(range(1, 10))


def loop_nop(n):
    args = nop_args()
    for _ in range(100):
        nop_with_args_kernel[(1,)](*args, 1, 2, 3, 4, 5)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        nop_with_args_kernel[(1,)](*args, 1, 2, 3, 4, 5)
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / n * 1e6


def loop_nop0(n):
    for _ in range(100):
        nop_kernel[(1,)]()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        nop_kernel[(1,)]()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) / n * 1e6


def mix():
    torch.manual_seed(0)
    x = torch.randn(100000, device="cuda")
    y = torch.randn(100000, device="cuda")
    out = torch.empty_like(x)
    sums = []
    for n in (1000, 50000, 100000):
        add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
        sums.append(float(out[:n].double().sum()))
    a = torch.randn(64, 1000, device="cuda")
    s = torch.empty_like(a)
    softmax_kernel[(64,)](s, a, a.stride(0), 1000, BLOCK=1024)
    z = torch.relu(s @ s.T)  # torch's own kernels
    sums.append(float(s.double().sum()))
    sums.append(float(z.double().sum()))
    torch.cuda.synchronize()
    print("checksums " + " ".join(f"{v:.6e}" for v in sums))


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "nop":
        print(f"us_per_launch={loop_nop(int(sys.argv[2])):.3f}")
    elif what == "nop0":
        print(f"us_per_launch={loop_nop0(int(sys.argv[2])):.3f}")
    elif what == "mix":
        mix()
