"""Compiled kernels launched directly, with and without the launcher memo,
in one process: compiled[grid](...) (trlat's C runner), CompiledKernel.run
(...) by hand (the launcher's hook), and the raw C cuLaunchKernelEx floor of
the same kernel and block (tests/gpu/rawloop.c), in interleaved blocks, the
fast path switched on and off at run time (trlat_api_fastpath). Each ratio
is taken inside one pair of blocks; the table gives their medians. Target:
a compiled[grid] hit at most 1.2x the raw floor.

  scripts/gpu-test.sh bench_compiled.py     [COMPILED_PAIRS=15 COMPILED_BLOCK=2000]"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import LIB, check, median, run, summary  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAIRS = int(os.environ.get("COMPILED_PAIRS", "15"))
BLOCK = int(os.environ.get("COMPILED_BLOCK", "2000"))
TARGET = 1.2

CHILD = r"""
import ctypes, os, sys, time
sys.path.insert(0, os.path.join(%(root)r, "scripts"))
import torch, triton, triton.language as tl
from bench_fastpath import raw_loop

@triton.jit
def add_kernel(x, y, o, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(o + i, tl.load(x + i, mask=m) + tl.load(y + i, mask=m), mask=m)

api = ctypes.CDLL(None)
api.trlat_api_fastpath.argtypes = [ctypes.c_int]
x = torch.randn(4096, device="cuda")
c = add_kernel[(4,)](x, x, x, 4096, BLOCK=1024)
stream = torch.cuda.current_stream().cuda_stream
from triton import knobs
enter, exit_ = knobs.runtime.launch_enter_hook, knobs.runtime.launch_exit_hook
vals = [ctypes.c_uint64(x.data_ptr())] * 3 + [ctypes.c_int32(4096), ctypes.c_uint64(0), ctypes.c_uint64(0)]
params = (ctypes.c_void_p * len(vals))(*[ctypes.cast(ctypes.byref(v), ctypes.c_void_p) for v in vals])
raw = raw_loop(c.function, 4, 32 * c.metadata.num_warps, c.metadata.shared, stream, params)
if raw is None:
    sys.exit("no raw loop (tests/gpu/librawloop.so)")

def compiled(k):
    t = time.perf_counter_ns()
    for _ in range(k):
        c[(4, 1, 1)](x, x, x, 4096, 1024)
    return (time.perf_counter_ns() - t) / k

def by_run(k):
    f, pm = c.function, c.packed_metadata
    t = time.perf_counter_ns()
    for _ in range(k):
        c.run(4, 1, 1, stream, f, pm, None, enter, exit_, x, x, x, 4096, 1024)
    return (time.perf_counter_ns() - t) / k

def jit(k):
    t = time.perf_counter_ns()
    for _ in range(k):
        add_kernel[(4,)](x, x, x, 4096, BLOCK=1024)
    return (time.perf_counter_ns() - t) / k

def arm(fn, on, k):
    api.trlat_api_fastpath(on)
    torch.cuda.synchronize()
    ns = fn(k)
    torch.cuda.synchronize()
    return ns

for fn in (compiled, by_run, jit):  # warm both ways
    arm(fn, 1, 500); arm(fn, 0, 500)
# the raw loop returns ns per launch, timed in C
arms = [("raw", raw)] + [(f"{fn.__name__}_{s}", (lambda fn, on: lambda k: arm(fn, on, k))(fn, on))
                         for fn in (compiled, by_run, jit) for s, on in (("on", 1), ("off", 0))]
for p in range(%(pairs)d):
    order = arms if p %% 2 == 0 else arms[:1] + arms[:0:-1]
    print("PAIR", " ".join(f"{name}={f(%(block)d):.1f}" for name, f in order), flush=True)
api.trlat_api_fastpath(1)
"""


def main():
    code = CHILD % {"root": ROOT, "pairs": PAIRS, "block": BLOCK}
    # a file, not -c: triton.jit reads the kernel's source
    fd, path = tempfile.mkstemp(prefix="trlat-compiled-", suffix=".py")
    with os.fdopen(fd, "w") as f:
        f.write(code)
    try:
        o, e, rc, rep = run([sys.executable, path], env={"TRLAT_FASTPATH": "1"}, timeout=300)
    finally:
        os.unlink(path)
    if not check("bench_compiled: the child ran", rc == 0, (o + e)[-600:]):
        return
    pairs = [dict(kv.split("=") for kv in l.split()[1:]) for l in o.splitlines() if l.startswith("PAIR")]
    pairs = [{k: float(v) for k, v in p.items()} for p in pairs]
    ratio = lambda a, b: median([p[a] / p[b] for p in pairs])  # noqa: E731
    print(f"TABLE compiled raw floor {median([p['raw'] for p in pairs]):.0f} ns per launch ({len(pairs)} pairs "
          f"of {BLOCK}, {LIB})")
    for name in ("compiled", "by_run", "jit"):
        on, off = ratio(f"{name}_on", "raw"), ratio(f"{name}_off", "raw")
        verdict = ""
        if name == "compiled":
            verdict = " PASS" if on <= TARGET else " FAIL"
        print(f"TABLE compiled {name}: fast path {on:.3f}x raw, Triton {off:.3f}x raw, "
              f"fast path / Triton {ratio(f'{name}_on', f'{name}_off'):.3f}{' (target <= %.1fx)' % TARGET if verdict else ''}"
              f"{verdict}")
    if rep:
        for k in rep["kernels"]:
            if k["name"] == "add_kernel":
                fp = k.get("fastpath") or {}
                check("bench_compiled: the compiled calls hit", fp.get("hits", 0) > PAIRS * BLOCK * 2,
                      f"hits {fp.get('hits')} misses {fp.get('misses')} fallbacks {fp.get('fallbacks')}")


main()
sys.exit(summary())
