# A probe: compiled[grid](...) hits of nop_with_args_kernel (5 tensors, 9 ints,
# 5 constexprs) on the stand-in Triton and torch of tests/fastpath and the
# fake driver, ns per call; `jit` instead: the same kernel as kernel[grid]
# (scripts/probes/callgrind_hits.sh).
import os
import sys
from calltime import ns_per_call

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fastpath"))
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def nop_with_args_kernel(t1, t2, t3, t4, t5, i1, i2, i3, i4, i5, i6, i7, i8, i9, c1: tl.constexpr,
                         c2: tl.constexpr, c3: tl.constexpr, c4: tl.constexpr, c5: tl.constexpr):
    pass


def main(n, how):
    t = [torch.empty(16) for _ in range(5)]
    args = t + [2, 3, 4, 5, 6, 7, 8, 9, 10] + [1, 2, 3, 4, 5]
    c = nop_with_args_kernel[(1, )](*args)
    if how == "jit":
        call = lambda: nop_with_args_kernel[(1, )](*args)  # noqa: E731
    else:
        call = lambda: c[(1, 1, 1)](*args)  # noqa: E731
    print("ns/call", ns_per_call(call, n))


main(int(sys.argv[1]), sys.argv[3] if len(sys.argv) > 3 else "compiled")
