# A probe (GPU): FlagGems ops at the shapes of bench_real_models.py's decode,
# each called in interleaved blocks in three arms of one process, switched
# at run time: profiling paused with the fast path off (about no trlat),
# profiling, and the fast path; ns per call and the ratios to the paused arm.
#   LD_PRELOAD=build/libtrlat.so TRLAT_FASTPATH=1 TRLAT_CUPTI=0 python3 scripts/probes/gems_ops.py [pairs] [block]
# Under TRLAT_FASTPATH_PHASES=1 trlat prints at exit where the LibEntry
# calls it served spent their time. Each op's line ends with whether its
# result was the same in every arm.
import ctypes
import statistics
import sys
import time

import torch
import flag_gems

api = ctypes.CDLL(None)
api.trlat_api_fastpath.argtypes = [ctypes.c_int]
api.trlat_api_profiling.argtypes = [ctypes.c_int]
ARMS = {"paused": (0, 0), "profile": (1, 0), "fastpath": (1, 1)}  # (profiling, fast path)

dev = "cuda"
h = torch.randn(1, 1, 128, device=dev)
g = torch.randn(1, 1, 128, device=dev)
w = torch.randn(256, 128, device=dev)  # the MLP's gate and up projections
kv = torch.randn(1, 2, 20, 32, device=dev)
kn = torch.randn(1, 2, 1, 32, device=dev)
OPS = {
    "add": lambda: torch.add(h, g),
    "mul": lambda: torch.mul(h, g),
    "mul_scalar": lambda: torch.mul(h, 0.5),
    "silu": lambda: torch.nn.functional.silu(h),
    "mm": lambda: torch.mm(h.view(1, 128), w.t()),  # as F.linear calls it: B column-major
    "cat": lambda: torch.cat([kv, kn], dim=-2),
    "rsqrt_mean": lambda: torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6),
}


def block(f, n):
    torch.cuda.synchronize()
    t = time.perf_counter_ns()
    for _ in range(n):
        f()
    torch.cuda.synchronize()
    return (time.perf_counter_ns() - t) / n


def main(pairs, n):
    with flag_gems.use_gems():
        for f in OPS.values():
            for _ in range(50):
                f()
        for name, f in OPS.items():
            ns = {a: [] for a in ARMS}
            order = list(ARMS)
            for p in range(pairs):
                for a in order if p % 2 == 0 else order[::-1]:
                    prof, fp = ARMS[a]
                    api.trlat_api_profiling(prof)
                    api.trlat_api_fastpath(fp)
                    ns[a].append(block(f, n))
            med = {a: statistics.median(v) for a, v in ns.items()}
            # the op's result in each arm, against the paused arm's (the same inputs)
            out = {}
            for a, (prof, fp) in ARMS.items():
                api.trlat_api_profiling(prof)
                api.trlat_api_fastpath(fp)
                out[a] = f()
            same = all(torch.equal(out[a], out["paused"]) for a in ARMS)
            print("GEMS_OP %-10s paused %7.0f ns  profile %7.0f (%.3fx)  fastpath %7.0f (%.3fx)  %s" % (
                name, med["paused"], med["profile"], med["profile"] / med["paused"], med["fastpath"],
                med["fastpath"] / med["paused"], "same results" if same else "RESULTS DIFFER"), flush=True)
    api.trlat_api_profiling(1)
    api.trlat_api_fastpath(1)


main(int(sys.argv[1]) if len(sys.argv) > 1 else 10, int(sys.argv[2]) if len(sys.argv) > 2 else 500)
