# Workloads for tests/integration/test_fastpath.sh, on the stand-in Triton
# of this directory and the fake driver: `python3 prog.py MODE [N]`. The
# test runs each with TRLAT_FASTPATH=0, 1 and verify and compares stdout and
# the TRLAT_FASTPATH_LOG launch logs, then checks the report's counters.
import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton import knobs  # noqa: E402

N = int(sys.argv[2]) if len(sys.argv) > 2 else 20


def cdiv(a, b):
    return (a + b - 1) // b


@triton.jit
def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
    pass


@triton.jit
def scalars_kernel(x, f, b, none, i, j: "i32", BLOCK: tl.constexpr):
    pass


@triton.jit(do_not_specialize=["n"], do_not_specialize_on_alignment=["m"])
def dns_kernel(x, n, m, BLOCK: tl.constexpr = 64):
    pass


@triton.jit
def nop_kernel():
    pass


@triton.jit
def cluster_kernel(x, n):
    pass


cluster_kernel.fn.fake_meta = {"num_ctas": 2, "launch_pdl": True, "shared": 1024}


@triton.jit
def coop_kernel(x, n):
    pass


coop_kernel.fn.fake_meta = {"launch_cooperative_grid": True, "num_warps": 8}


@triton.jit
def scratch_kernel(x, n):
    pass


scratch_kernel.fn.fake_meta = {"global_scratch_size": 128}

SCALE = 2


@triton.jit
def global_kernel(x, n):
    pass


global_kernel.fn.fake_globals = ("SCALE", )


def corpus():
    x, y, out = torch.empty(4096), torch.empty(4096), torch.empty(4096)
    for rep in range(N):
        # vector add, n changing: crosses 1, multiples of 16, the i32/i64 and u64 boundaries
        for n in (1, 2, 16, 17, 1000, 1024, 4096, 2**31 - 1, 2**31, 2**40 + 16, 2**63 + 16):
            add_kernel[lambda meta: (cdiv(min(n, 4096), meta["BLOCK"]), )](x, y, out, n, BLOCK=1024)
            add_kernel[(cdiv(min(n, 4096), 256), )](x, y, out, n, BLOCK=256)
        # misaligned views and dtype changes
        add_kernel[(4, )](x.view_at(1), y, out, 64, BLOCK=16)
        add_kernel[(4, )](x.view_at(4), y.view_at(8), out, 64, BLOCK=16)
        h = torch.empty(64, torch.float16)
        add_kernel[(4, )](h, h, h, 64, BLOCK=16)
        add_kernel[[2, 1, 1]](x, y, out, 64 + rep, BLOCK=32)  # a list grid
        add_kernel[(0, )](x, y, out, 64, BLOCK=32)  # empty grid: no launch
        # floats, bools, None, an annotated int, Parameters
        for f, b in ((1.5, True), (-0.0, False), (3e38, True)):
            scalars_kernel[(1, )](x, f, b, None, rep + 5, 7, BLOCK=8)
        p = torch.nn.Parameter(64)
        scalars_kernel[(2, 3, 4)](p, 0.25, False, None, 16, 1, BLOCK=8)
        # do_not_specialize / on_alignment
        for n in (1, 16, 33):
            dns_kernel[(1, )](x, n, n)
            dns_kernel[(1, )](x, n=n, m=n + 1, BLOCK=128)
        # options and constexprs changing
        add_kernel[(1, )](x, y, out, 100, BLOCK=64, num_warps=8)
        add_kernel[(1, )](x, y, out, 100, BLOCK=64, num_warps=8, debug=True)
        nop_kernel[(1, )]()
        cluster_kernel[(3, )](x, 10 + rep)
        coop_kernel[(5, )](x, 10)
        # two streams
        torch._set_stream(0x1234)
        add_kernel[(2, )](x, y, out, 300, BLOCK=128)
        torch._set_stream(0)
        add_kernel[(2, )](x, y, out, 300, BLOCK=128)
        # run() called directly (the hook's path, not kernel[grid])
        add_kernel.run(x, y, out, 77 + rep, grid=(3, ), warmup=False, BLOCK=128)
    print("corpus done")


def threads():
    def work(i):
        x = torch.empty(1024)
        for r in range(N):
            add_kernel[(i + 1, )](x, x, x, 1000 + r, BLOCK=256)

    ts = [threading.Thread(target=work, args=(i, )) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print("threads done")


def hooks():
    x = torch.empty(64)
    seen = []
    add_kernel.add_pre_run_hook(lambda *a, **k: seen.append("pre"))
    for _ in range(N):
        add_kernel[(1, )](x, x, x, 64, BLOCK=64)
    add_kernel.pre_run_hooks.clear()
    knobs.runtime.launch_enter_hook.add(lambda md: seen.append("enter"))
    for _ in range(N):
        add_kernel[(1, )](x, x, x, 64, BLOCK=64)
    knobs.runtime.launch_enter_hook.calls.clear()
    for _ in range(N):
        add_kernel[(1, )](x, x, x, 64, BLOCK=64)
    print("pre", seen.count("pre"), "enter", seen.count("enter"))


def fallbacks():
    global SCALE
    x = torch.empty(64)
    for _ in range(N):
        scratch_kernel[(1, )](x, 5)
    for _ in range(N):
        add_kernel.warmup(x, x, x, 64, BLOCK=64, grid=(1, ))
    for _ in range(N):  # a grid function that launches another kernel: two launches per call
        add_kernel[lambda m: (nop_kernel[(1, )](), 1)[1:]](x, x, x, 64, BLOCK=64)
    for _ in range(N):
        try:
            add_kernel[(1, )](x, x, x, (1, 2), BLOCK=64)  # a tuple argument
        except Exception as e:  # noqa: BLE001
            print("tuple:", type(e).__name__)
            break
    for _ in range(N):
        global_kernel[(1, )](x, 3)
    SCALE = 3
    for _ in range(3):
        try:
            global_kernel[(1, )](x, 3)
        except RuntimeError as e:
            print("global:", e)
    SCALE = 2
    for _ in range(N):
        try:
            add_kernel[(1, )](x, x, x, 64, BLOCK=64, bogus_option=[1])
        except Exception as e:  # noqa: BLE001
            print("option:", type(e).__name__, e)
            break
    cpu = torch.Tensor(64, device="cpu")
    for _ in range(N):
        add_kernel[(1, )](cpu, x, x, 64, BLOCK=64)
    def bad_grid(meta):
        raise ValueError("grid says no")
    for _ in range(3):
        try:
            add_kernel[bad_grid](x, x, x, 64, BLOCK=64)
        except ValueError as e:
            print("grid:", e)
    print("fallbacks done")


def align():
    # 32- and 16-byte aligned pointers: one class for the memo, two for a
    # Triton run with FAKE_TRITON_ALIGN=32
    x = torch.Tensor(4096, ptr=0x7f1000000000)
    for _ in range(N):
        add_kernel[(1, )](x, x, x, 64, BLOCK=64)
        add_kernel[(1, )](x.view_at(4), x, x, 64, BLOCK=64)
    print("align done")


def memo(n_keys):
    # more distinct keys than the memo holds (TRLAT_FASTPATH_MEMO): bounded
    x = torch.empty(64)
    for r in range(3):
        for i in range(n_keys):
            add_kernel[(1, )](x, x, x, 64, BLOCK=16 * (i + 1))
    print("memo done")


def loop():
    x = torch.empty(4096)
    for i in range(N):
        add_kernel[lambda m: (cdiv(i + 1, m["BLOCK"]), )](x, x, x, i + 1, BLOCK=128)
    print("loop done")


if __name__ == "__main__":
    mode = sys.argv[1]
    # the run hook is installed when the first kernel loads: a first call
    # before the workload, so each workload's calls are all seen
    @triton.jit
    def warm_kernel():
        pass

    warm_kernel[(1, )]()
    if mode == "memo":
        memo(N)
    else:
        globals()[mode]()
