# A probe: FlagGems' LibEntry (its class verbatim, tests/fastpath/flag_gems)
# around an add kernel on the stand-in Triton and torch of tests/fastpath and
# the fake driver, ns per call: `libentry` kernel[grid](...) through
# LibEntry.run (served in C unless TRLAT_FASTPATH_LIBENTRY=0), `compiled` the
# same launch as compiled[grid](...), `jit` as the bare kernel[grid](...).
#   LD_PRELOAD=build/libtrlat.so TRLAT_FASTPATH=1 python3 scripts/probes/hit_libentry.py N [libentry|compiled|jit]
import os
import sys
from calltime import ns_per_call

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fastpath"))
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from flag_gems.utils.libentry import LibEntry  # noqa: E402


@triton.jit
def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
    pass


def main(n, how):
    x, y, out = torch.empty(4096), torch.empty(4096), torch.empty(4096)
    le = LibEntry(add_kernel)
    c = add_kernel[(64, )](x, y, out, 4096, BLOCK=64)
    call = {"libentry": lambda: le[(64, )](x, y, out, 4096, BLOCK=64),
            "compiled": lambda: c[(64, 1, 1)](x, y, out, 4096, 64),
            "jit": lambda: add_kernel[(64, )](x, y, out, 4096, BLOCK=64)}[how]
    print("%s ns/call %.0f" % (how, ns_per_call(call, n)))


main(int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else "libentry")
