# A probe: nop_with_args hits on the stand-in Triton (scripts/probes/standin.py) with torch CPU tensors
# and the fake driver, ns per call (scripts/probes/fake_phases.sh).
import sys
import time

from standin import torch, triton, tl

@triton.jit
def nop_with_args_kernel(t1, t2, t3, t4, t5, i1, i2, i3, i4, i5, i6, i7, i8, i9, c1: tl.constexpr, c2: tl.constexpr, c3: tl.constexpr, c4: tl.constexpr, c5: tl.constexpr):
    pass

def main(n):
    t = [torch.zeros(16) for _ in range(5)]
    args = t + [2, 3, 4, 5, 6, 7, 8, 9, 10]
    const = (1, 2, 3, 4, 5)
    for _ in range(100):
        nop_with_args_kernel[(1,)](*args, *const)
    a = time.perf_counter_ns()
    for _ in range(n):
        nop_with_args_kernel[(1,)](*args, *const)
    b = time.perf_counter_ns()
    print("ns/call", (b - a) / n)
main(int(sys.argv[1]))
