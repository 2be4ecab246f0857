# A probe: FlagGems' LibEntry (its class verbatim, tests/fastpath/flag_gems)
# around an add kernel on the stand-in Triton and torch of tests/fastpath and
# the fake driver, ns per call: `libentry` kernel[grid](...) through
# LibEntry.run (served in C unless TRLAT_FASTPATH_LIBENTRY=0), `compiled` the
# same launch as compiled[grid](...), `jit` as the bare kernel[grid](...);
# `strided` LibEntry.run of a kernel that takes three StridedBuffer-like
# objects and five ints (FlagGems' pointwise kernels), `hook` the add
# kernel's LibEntry with a launch pre-hook on its entry (FlagGems' mm),
# `first` the `strided` call with a new length every call (its key a new
# one: LibEntry's first-call path, as a decode's growing KV cache takes it),
# `heur` the same first call of the kernel under Triton's Heuristics (one
# heuristic that picks BLOCK: FlagGems' softmax and mean kernels).
#   LD_PRELOAD=build/libtrlat.so TRLAT_FASTPATH=1 python3 scripts/probes/hit_libentry.py N [libentry|compiled|jit|strided|hook|first|heur]
# Instructions a served call: the same under
#   valgrind --tool=callgrind --toggle-collect='fp_libentry_run*'
# divided by N + 100 (the warm-up calls are counted too).
import os
import sys
from calltime import ns_per_call

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fastpath"))
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from flag_gems.utils.libentry import LibEntry  # noqa: E402


class StridedBuffer:  # FlagGems' data_ptr(), its attribute's
    def __init__(self, t):
        self.dtype, self._data_ptr = t.dtype, t.data_ptr()

    def data_ptr(self):
        return self._data_ptr


@triton.jit
def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
    pass


@triton.jit
def pointwise_kernel(x, y, out, s0, s1, s2, n, tiles, BLOCK: tl.constexpr, ONE: tl.constexpr):
    pass


def with_hook(le, call):
    """The entry LibEntry stored for call, given a launch pre-hook as a
    tuned config's pre_hook is stored (with the config's kwargs)."""
    call()
    cache = le.kernel_cache[0]
    key = next(iter(cache))
    kernel, constexprs, tuned, heur, _ = cache[key]

    def pre_hook(nargs):
        nargs["BLOCK"]

    cache[key] = (kernel, constexprs, tuned, heur, ((pre_hook, {"BLOCK_M": 64, "num_warps": 4, "num_stages": 3}), ))
    return call


def main(n, how):
    x, y, out = torch.empty(4096), torch.empty(4096), torch.empty(4096)
    le = LibEntry(add_kernel)
    c = add_kernel[(64, )](x, y, out, 4096, BLOCK=64)
    if how in ("strided", "first", "heur"):
        if how == "heur":
            from triton.runtime import autotuner
            autotuner.install()  # triton.heuristics, as Triton's
            pw = LibEntry(triton.heuristics({"BLOCK": lambda a: 64 if a["n"] > 64 else 32})(pointwise_kernel))
        else:
            pw = LibEntry(pointwise_kernel)
        a, b, o = StridedBuffer(x), StridedBuffer(y), StridedBuffer(out)
        lengths = iter(range(4096, 1 << 62, 16))  # a multiple of 16 each: one key below LibEntry's
        n_of = (lambda: 4096) if how == "strided" else (lambda: next(lengths))
        block = {} if how == "heur" else {"BLOCK": 64}  # the heuristic picks it
        call = lambda: pw[(64, 1, 1)](a, b, o, 1, 1, 1, n_of(), 1, ONE=True, **block)  # noqa: E731
    elif how == "hook":
        call = with_hook(le, lambda: le[(64, )](x, y, out, 4096, BLOCK=64))
    else:
        call = {"libentry": lambda: le[(64, )](x, y, out, 4096, BLOCK=64),
                "compiled": lambda: c[(64, 1, 1)](x, y, out, 4096, 64),
                "jit": lambda: add_kernel[(64, )](x, y, out, 4096, BLOCK=64)}[how]
    print("%s ns/call %.0f" % (how, ns_per_call(call, n)))


main(int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else "libentry")
