"""Where the Python hook's cost goes (GPU machine, one process, interleaved).

    LD_PRELOAD=build/libtrlat.so TRLAT_CUPTI=0 python3 scripts/probe_hook_parts.py [--pairs 30] [--block 2000]

Times tritonbench's nop_with_args_kernel loop with trlat's Python wrappers
switched per arm: none (Triton's own __getitem__ and run), only the
kernel[grid] wrapper, only the run hook, both; each in two shapes: `loop`
(the launches in one frame, tritonbench's loop and bench_pyhook's) and
`call` (a Python function called per launch, which launches once: a fresh
frame each time, the hook's worst case). The driver interposer is in every
arm. Prints each arm's median ns per launch and its difference from the
none arm of its shape (median of per-round differences)."""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "gpu"))
from bench_pyhook import nop_with_args  # noqa: E402
from common import pin, timed  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=30)
    ap.add_argument("--block", type=int, default=2000)
    a = ap.parse_args()
    pin()
    import torch
    from triton.runtime.jit import JITFunction, KernelInterface
    launch, loop = nop_with_args()
    launch()  # the hook is in place by the first launch
    wrappers = {}
    for cls, name in ((JITFunction, "run"), (KernelInterface, "__getitem__")):
        w = cls.__dict__[name]
        orig = w.__wrapped__
        wrappers[name] = (cls, w, orig)

    def switch(run_on, get_on):
        for name, (cls, w, orig) in wrappers.items():
            setattr(cls, name, w if (run_on if name == "run" else get_on) else orig)

    parts = {"none": (0, 0), "getitem": (0, 1), "run": (1, 0), "both": (1, 1)}
    shapes = {"loop": loop, "call": timed(launch)}
    arms = [(shape, part) for shape in shapes for part in parts]
    loop(3000)
    res = {a: [] for a in arms}
    for i in range(a.pairs):
        for arm in arms[i % len(arms):] + arms[:i % len(arms)]:
            switch(*parts[arm[1]])
            shapes[arm[0]](50)
            torch.cuda.synchronize()
            res[arm].append(shapes[arm[0]](a.block))
            torch.cuda.synchronize()
    switch(1, 1)
    for shape, part in arms:
        base = res[(shape, "none")]
        d = statistics.median(x - b for x, b in zip(res[(shape, part)], base))
        print("%-5s %-8s %7.0f ns/launch  %+5.0f ns vs none (%+.2f%%)" %
              (shape, part, statistics.median(res[(shape, part)]), d, 100 * d / statistics.median(base)))


if __name__ == "__main__":
    main()
