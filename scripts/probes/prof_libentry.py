# A probe: what profiling costs a FlagGems LibEntry call (its class verbatim,
# tests/fastpath/flag_gems, around an add kernel on the stand-in Triton and
# torch and the fake driver), called from under DEPTH frames of library code
# (a module under a site-packages directory, as a model's transformers
# frames are): ns per call with trlat recording and with profiling paused
# (trlat_api_profiling), in alternating blocks of one process.
#   LD_PRELOAD=build/libtrlat.so TRLAT_CUPTI=0 python3 scripts/probes/prof_libentry.py DEPTH [pairs] [block]
# PROF_ARM=on or off: that arm's blocks only (its instructions under
# callgrind: the whole process at two block sizes, the difference).
import ctypes
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fastpath"))
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from flag_gems.utils.libentry import LibEntry  # noqa: E402

LIB = tempfile.mkdtemp(prefix="trlat-probe-")
os.makedirs(os.path.join(LIB, "site-packages"))
with open(os.path.join(LIB, "site-packages", "deep_lib.py"), "w") as f:
    # the launches are made from the library's own loop, as FlagGems' from
    # its ops, so that the user site is the frame under all DEPTH of them
    f.write("def down(n, f, *a):\n    return f(*a) if n == 0 else down(n - 1, f, *a)\n\n\n"
            "def loop(n, le, x, y, out):\n    for _ in range(n):\n        le[(64, )](x, y, out, 4096, BLOCK=64)\n")
sys.path.insert(0, os.path.join(LIB, "site-packages"))
import deep_lib  # noqa: E402


@triton.jit
def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
    pass


def main(depth, pairs, n):
    api = ctypes.CDLL(None)
    api.trlat_api_profiling.argtypes = [ctypes.c_int]
    x, y, out = torch.empty(4096), torch.empty(4096), torch.empty(4096)
    le = LibEntry(add_kernel)

    def block():
        deep_lib.down(depth, deep_lib.loop, n, le, x, y, out)

    block()
    arms = {"on": (1, ), "off": (0, )}.get(os.environ.get("PROF_ARM", ""))
    ns = {1: [], 0: []}
    for p in range(pairs):
        for on in arms or ((1, 0) if p % 2 == 0 else (0, 1)):
            api.trlat_api_profiling(on)
            t = time.perf_counter_ns()
            block()
            ns[on].append((time.perf_counter_ns() - t) / n)
    api.trlat_api_profiling(1)
    if arms:
        print("depth %d: %s %.0f ns/call" % (depth, os.environ["PROF_ARM"], statistics.median(ns[arms[0]])))
        return
    on, off = statistics.median(ns[1]), statistics.median(ns[0])
    print("depth %d: recording %.0f ns/call, paused %.0f: +%.0f ns" % (depth, on, off, on - off))


main(int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 10, int(sys.argv[3]) if len(sys.argv) > 3 else 2000)
