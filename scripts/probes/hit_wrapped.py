# A probe for the GPU machine: a fast-path hit launched from a function of the
# program (its frame is new on every call, as in `def add(x, y):
# add_kernel[grid](...)`) against the same launch inline in a loop, blocks
# alternating in one process; ns per launch, medians of the blocks.
#   LD_PRELOAD=build/libtrlat.so TRLAT_FASTPATH=1 TRLAT_CUPTI=0 python3 scripts/probes/hit_wrapped.py [BLOCKS] [N]
import statistics
import sys
import time

import torch
import triton


@triton.jit
def nop_kernel():
    pass


def launch():
    nop_kernel[(1, )]()


def wrapped(n):
    for _ in range(n):
        launch()


def inline(n):
    for _ in range(n):
        nop_kernel[(1, )]()


def main(blocks, n):
    inline(200)
    wrapped(200)
    torch.cuda.synchronize()
    ns = {"wrapped": [], "inline": []}
    for b in range(blocks):
        for name, f in (("wrapped", wrapped), ("inline", inline)) if b % 2 else (("inline", inline), ("wrapped", wrapped)):
            torch.cuda.synchronize()
            t0 = time.perf_counter_ns()
            f(n)
            ns[name].append((time.perf_counter_ns() - t0) / n)
    torch.cuda.synchronize()
    w, i = statistics.median(ns["wrapped"]), statistics.median(ns["inline"])
    print("wrapped %.0f ns  inline %.0f ns  wrapped-inline %.0f ns  ratio %.3f" % (w, i, w - i, w / i))


main(int(sys.argv[1]) if len(sys.argv) > 1 else 20, int(sys.argv[2]) if len(sys.argv) > 2 else 2000)
