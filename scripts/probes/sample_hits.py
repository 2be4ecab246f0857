# A probe for the GPU machine (no perf there): where a fast-path hit's time
# goes against the raw driver loop and the Python-level floor of the same
# process, sampled by scripts/probes/sampler.c (LD_PRELOAD'ed with libtrlat.so).
# Blocks of each arm alternate; each block is sampled under its own tag.
#   LD_PRELOAD="build/libtrlat.so build/probes/libsampler.so" TRLAT_FASTPATH=1 TRLAT_CUPTI=0 \
#     python3 scripts/probes/sample_hits.py nop0|nop_with_args REPS BLOCK OUT
#   python3 scripts/probes/sample_report.py OUT
import ctypes
import json
import os
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path[:0] = [os.path.join(ROOT, "scripts"), os.path.join(ROOT, "tests", "gpu")]
import bench_fastpath as B  # noqa: E402
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def nop_with_args_kernel(t1, t2, t3, t4, t5, i1, i2, i3, i4, i5, i6, i7, i8, i9, c1: tl.constexpr,
                         c2: tl.constexpr, c3: tl.constexpr, c4: tl.constexpr, c5: tl.constexpr):
    pass


@triton.jit
def nop_kernel():
    pass


def main(kernel, reps, block, out):
    stream = torch.cuda.Stream()
    torch.cuda.set_stream(stream)
    t = [torch.zeros(16, device="cuda") for _ in range(5)]
    args = t + [2, 3, 4, 5, 6, 7, 8, 9, 10]
    const = (1, 2, 3, 4, 5)
    stmt = "nop_with_args_kernel[(1, )](*args, *const)" if kernel == "nop_with_args" else "nop_kernel[(1, )]()"
    env = dict(globals(), args=args, const=const)
    k = eval(stmt, env)
    hit = B.inline(stmt, env)
    vals = [ctypes.c_uint64(a.data_ptr()) for a in t] + [ctypes.c_int32(v) for v in args[5:]] \
        if kernel == "nop_with_args" else []
    vals += [ctypes.c_uint64(0), ctypes.c_uint64(0)]
    params = (ctypes.c_void_p * len(vals))(*[ctypes.cast(ctypes.byref(v), ctypes.c_void_p) for v in vals])
    blk, sh = 32 * k.metadata.num_warps, k.metadata.shared
    raw = B.raw_loop(k.function, 1, blk, sh, stream.cuda_stream, params)
    floor = B.py_floor(k.function, 1, blk, sh, stream.cuda_stream, params)["pyc_device"]
    floor_loop = B.inline("f" + stmt[stmt.rindex("]("):][1:], dict(env, f=floor))
    S = ctypes.CDLL(None)
    S.sampler_start.argtypes, S.sampler_dump.argtypes = [ctypes.c_int], [ctypes.c_char_p]
    arms = {1: ("raw", raw), 2: ("floor", floor_loop), 3: ("hit", hit)}
    for _, f in arms.values():
        f(block)
    torch.cuda.synchronize()
    wall = {name: 0.0 for name, _ in arms.values()}
    for _ in range(reps):
        for tag, (name, f) in arms.items():
            torch.cuda.synchronize()
            if S.sampler_start(tag):
                raise SystemExit("sampler_start failed")
            t0 = time.perf_counter()
            f(block)
            wall[name] += time.perf_counter() - t0
            S.sampler_stop()
    torch.cuda.synchronize()
    S.sampler_dump(out.encode())
    per = {name: wall[name] / (reps * block) * 1e9 for name in wall}
    with open(out + ".json", "w") as fh:
        json.dump({"kernel": kernel, "ns_per_launch": per, "tags": {str(t): n for t, (n, _) in arms.items()}}, fh)
    print(kernel, " ".join("%s %.0f ns" % kv for kv in per.items()),
          "hit/raw %.2f floor/raw %.2f" % (per["hit"] / per["raw"], per["floor"] / per["raw"]))


main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
