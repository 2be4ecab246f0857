# Workloads for tests/integration/test_fastpath.sh, on the stand-in Triton
# of this directory and the fake driver: `python3 prog.py MODE [N]`. The
# test runs each with TRLAT_FASTPATH=0, 1 and verify and compares stdout and
# the TRLAT_FASTPATH_LOG launch logs, then checks the report's counters.
import os
import sys
import threading
import types

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


@triton.jit(do_not_specialize=["v"])
def annint_kernel(x, s: int, t: "i64", u: "u64", v: int, BLOCK: tl.constexpr):  # FlagGems' `stride: int`
    pass


@triton.jit(do_not_specialize=["n"], do_not_specialize_on_alignment=["m"])
def dns_kernel(x, n, m, BLOCK: tl.constexpr = 64):
    pass


@triton.jit
def dtype_kernel(x, n, DT: tl.constexpr):
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
        # ints annotated int/i64/u64 (FlagGems' strides): keyed by class, 1
        # a parameter still; v do_not_specialize
        for s in (1, 2, 3, 16, 32, 17, 1 + rep, 2**31 - 1, -5):
            annint_kernel[(1, )](x, s, s * 3 + 2**33, 2**63 + 16 * s if s > 0 else 7, s, BLOCK=8)
        # do_not_specialize / on_alignment
        for n in (1, 16, 33):
            dns_kernel[(1, )](x, n, n)
            dns_kernel[(1, )](x, n=n, m=n + 1, BLOCK=128)
        # options and constexprs changing
        add_kernel[(1, )](x, y, out, 100, BLOCK=64, num_warps=8)
        add_kernel[(1, )](x, y, out, 100, BLOCK=64, num_warps=8, debug=True)
        nop_kernel[(1, )]()
        # a tl.dtype constexpr (Liger's kernels): two dtypes alternating, and
        # a new object of equal value (a miss: keyed by identity)
        for dt in (tl.float16, tl.bfloat16, tl.float16, tl.dtype("fp16")):
            dtype_kernel[(1, )](x, 5, dt)
        cluster_kernel[(3, )](x, 10 + rep)
        coop_kernel[(5, )](x, 10)
        # two streams
        torch._set_stream(0x1234)
        add_kernel[(2, )](x, y, out, 300, BLOCK=128)
        torch._set_stream(0)
        add_kernel[(2, )](x, y, out, 300, BLOCK=128)
        # another device with a stream of its own: switched (its context made
        # current), then deferred (torch's target device; the context stays
        # device 0's), then back
        torch._set_stream(0x5678, device=1)
        for deferred in (False, True):
            torch._set_device(1, deferred)
            for i in range(3):
                add_kernel[(2, )](x, y, out, 300, BLOCK=128)
            torch._set_device(0)
            add_kernel[(2, )](x, y, out, 300, BLOCK=128)
        # run() called directly (the hook's path, not kernel[grid])
        add_kernel.run(x, y, out, 77 + rep, grid=(3, ), warmup=False, BLOCK=128)
    print("corpus done")
    if os.environ.get("FAKE_C10_LIB"):
        print("c10_calls=%d c10_device_calls=%d" % (torch.c10_calls(), torch.c10_calls("fake_c10_device_calls")),
              file=sys.stderr)


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


def rebind():
    # a JITFunction's attributes rebound in a hot loop (specialized stores:
    # on CPython 3.13.0 a watcher on the object's __dict__ misses them,
    # CPython gh-125608): the hooks run and the kernel Triton picks follows
    # the debug flag, call by call, as without the fast path
    x = torch.empty(64)
    seen, kernels, picked = [], [], []
    hook = lambda *a, **k: seen.append("pre")  # noqa: E731
    for i in range(8 * N):
        add_kernel.pre_run_hooks = [hook] if i % 4 == 3 else []
        add_kernel.debug = i % 8 == 7
        k = add_kernel[(1, )](x, x, x, 64, BLOCK=64)
        if k not in kernels:
            kernels.append(k)
        picked.append(str(kernels.index(k)))
    add_kernel.pre_run_hooks = []
    add_kernel.debug = None
    print("pre", len(seen), "kernels", "".join(picked))


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
    # run()'s own keywords given to kernel[grid](...): the lambda raises
    # TypeError (the same call site's keywords three times, then built anew)
    for _ in range(3):
        try:
            add_kernel[(1, )](x, x, x, 64, BLOCK=64, warmup=False)
        except TypeError as e:
            print("run keyword:", e)
    for kw in ({"grid": (2, )}, {"warmup": True}, {"grid": (2, ), "BLOCK": 64}):
        try:
            add_kernel[(1, )](x, x, x, 64, **kw)
        except TypeError as e:
            print("run keyword:", e)
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


CD = triton.cdiv
impure_calls = []


def impure(a, b):
    impure_calls.append(a)
    return 1


def workload_grids(x):
    global CD
    # accepted: a closure n that changes on every call, BLOCK from meta; one key
    for i in range(N):
        n = 1024 + 32 * i

        def grid_cdiv(meta):
            return (triton.cdiv(n, meta["BLOCK"]), )

        add_kernel[grid_cdiv](x, x, x, n, BLOCK=128)
    # accepted: this module's cdiv, min, max, next_power_of_2, a module int
    for i in range(N):
        n = 64 * (i + 1)

        def grid_mix(meta):
            return (min(cdiv(n, meta["BLOCK"]), 7), max(triton.next_power_of_2(n) // 256, 1), SCALE)

        add_kernel[grid_mix](x, x, x, n, BLOCK=64)
    # accepted: floor division, modulo and shifts of negative ints
    for i in range(N):
        n = i - N // 2

        def grid_signs(meta):
            return ((-n) // 3 % 5 + 1, (n % 7) + (n >> 1 & 3) + 1, (~n ^ n) + 2)

        add_kernel[grid_signs](x, x, x, n, BLOCK=64)
    # rejected: a tensor's attribute; a side effect; a call of len and str
    for i in range(N):

        def grid_tensor(meta):
            return (meta["x"].n // 1024, )

        add_kernel[grid_tensor](x, x, x, 64, BLOCK=64)
    seen = []

    def grid_effect(meta):
        seen.append(meta["n"])
        return (1, )

    def grid_len(meta):
        return (len(str(meta["n"])), )

    for i in range(N):
        add_kernel[grid_effect](x, x, x, 64 + 16 * i, BLOCK=64)
        add_kernel[grid_len](x, x, x, 64 + 16 * i, BLOCK=64)
    print("effect", len(seen))
    # a bool where an int was: the function decides
    for i in range(N):

        def grid_bool(meta):
            return (meta["b"] + 1, )

        scalars_kernel[grid_bool](x, 1.5, i % 2 == 0, None, 7, 7, BLOCK=8)
    # what the program called through, changed after it was made: a global
    # rebound to a pure function, then to one with a side effect; the
    # module attribute triton.cdiv replaced; its function replaced; its
    # __dict__ replaced
    for phase in range(3):
        if phase == 1:
            CD = lambda a, b: a // b + 2  # noqa: E731
        elif phase == 2:
            CD = impure
        for i in range(N):
            n = 4096 + 16 * i

            def grid_rebind(meta):
                return (CD(n, meta["BLOCK"]), )

            add_kernel[grid_rebind](x, x, x, n, BLOCK=1024)
    print("impure", len(impure_calls))
    cdiv_obj, cdiv_fn = triton.cdiv, triton.cdiv.fn
    for phase in range(4):
        if phase == 1:
            triton.cdiv = triton.constexpr_function(lambda a, b: 3)
        elif phase == 2:
            triton.cdiv = cdiv_obj
            cdiv_obj.fn = lambda a, b: a // b + 5
        elif phase == 3:
            cdiv_obj.__dict__ = {"fn": lambda a, b: a // b + 7}  # no dict event
        for i in range(N):
            n = 4096 + 16 * i

            def grid_attr(meta):
                return (triton.cdiv(n, meta["BLOCK"]), )

            add_kernel[grid_attr](x, x, x, n, BLOCK=1024)
    cdiv_obj.fn = cdiv_fn
    # a grid that raises on a hit: a closure divisor of 0
    for d in (4, 2, 0, 1):

        def grid_raise(meta):
            return (meta["n"] // d, )

        try:
            add_kernel[grid_raise](x, x, x, 64, BLOCK=64)
        except ZeroDivisionError as e:
            print("raise:", type(e).__name__)
    # past int64 the function decides; an empty grid launches nothing
    for big in (2**40, 2**62, 3):

        def grid_big(meta):
            return (big * 4 // 2**40, )

        add_kernel[grid_big](x, x, x, 64, BLOCK=64)


LAMBDAS = {}  # code object -> the name prog.py counts its calls under


def workload_cells(x):
    import triton  # noqa: F811 (a local: the grids below reach the module through a closure cell)
    cd, mx = triton.cdiv, max

    def helper(a, b):
        return (a + b - 1) // b

    # accepted: the module, a ConstexprFunction, max and a local function,
    # each held by a closure cell of a new grid function on every call
    for i in range(N):
        n = 2048 + 32 * i
        grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]), )  # noqa: E731
        LAMBDAS[grid.__code__] = "grid_lambda"
        add_kernel[grid](x, x, x, n, BLOCK=256)

        def grid_cellmod(meta):
            return (triton.cdiv(n, meta["BLOCK"]), triton.next_power_of_2(n) // 1024)

        add_kernel[grid_cellmod](x, x, x, n, BLOCK=256)

        def grid_cellfn(meta):
            return (cd(n, meta["BLOCK"]) + helper(n, 512), mx(n // 1024, 1))

        add_kernel[grid_cellfn](x, x, x, n, BLOCK=256)
    # the cell rebound between calls: another module (its cdiv adds 3: the
    # program looks again), an object that is not a module (the grid is
    # called from then on), triton again
    fake = types.ModuleType("fake_triton")
    fake.cdiv = triton.constexpr_function(lambda a, b: a // b + 3)
    ns = types.SimpleNamespace(cdiv=lambda a, b: a // b + 5)
    for mod in (triton, fake, ns, triton):
        for i in range(N):
            n = 4096 + 16 * i

            def grid_cellrebind(meta):
                return (mod.cdiv(n, meta["BLOCK"]), )

            add_kernel[grid_cellrebind](x, x, x, n, BLOCK=1024)

    # two closures of one code object, alternating: triton, then fake
    def make(m):
        def grid_cellsep(meta):
            return (m.cdiv(meta["n"], meta["BLOCK"]), )

        return grid_cellsep

    sep = (make(triton), make(fake))
    for i in range(N):
        add_kernel[sep[i % 2]](x, x, x, 4096 + 16 * i, BLOCK=1024)


def fuzz_grids(x):
    # Python's int semantics at the edges (gridop.c): a grid function that
    # is accepted, over values where int64 floor division, modulo and
    # shifts are easy to get wrong or overflow (the function decides then)
    for a in (0, 1, -1, 5, -5, 2**31, -2**31 - 1, 2**62 + 3, -2**63, 2**63 - 1):
        for b in (1, -1, 3, -3, 2**32 + 1, -(2**40)):
            for s in (0, 1, 5, 62, 63, 64, 100):

                def fuzz_grid(meta):
                    return ((a // b) % 997 + 1, (a % b) % 991 + min(a, b, s) % 7 + 1,
                            ((a << s) ^ (a >> s) | -b & a) % 983 + max(b * s, a - b, a + b) % 5 + 1)

                add_kernel[fuzz_grid](x, x, x, 64, BLOCK=64)


def grids():
    # sys.setprofile counts the calls of each grid_* function (on stderr):
    # with the fast path on, the accepted ones run only on misses
    x = torch.empty(4096)
    calls = {}

    def prof(frame, event, arg):
        if event == "call":
            name = LAMBDAS.get(frame.f_code, frame.f_code.co_name)
            if name.startswith("grid_"):
                calls[name] = calls.get(name, 0) + 1

    sys.setprofile(prof)
    try:
        workload_grids(x)
        workload_cells(x)
        fuzz_grids(x)
    finally:
        sys.setprofile(None)
    print(" ".join("%s=%d" % kv for kv in sorted(calls.items())), file=sys.stderr)
    print("grids done")


def backoff():
    # calls that keep missing (an empty grid: Triton launches nothing, so
    # nothing is memoized), then the same key with a real grid: the miss
    # backoff stops keying the first part and gives the second its hits back
    x = torch.empty(64)
    for _ in range(400):
        add_kernel[(0, )](x, x, x, 64, BLOCK=16)
    for _ in range(3000):
        add_kernel[(1, )](x, x, x, 64, BLOCK=16)
    print("backoff done")


def lastcall():
    # consecutive calls of one kernel differing in one thing each: the
    # layout's last hit (fastpath/lastcall.c) may serve only those keyed the
    # same, with this call's values in the block
    x, y, out = torch.empty(4096), torch.empty(4096), torch.empty(4096)
    for rep in range(N):
        for n in range(60, 70):  # new int objects: one class but 64 (div 16)
            add_kernel[(1, )](x, y, out, n, BLOCK=64)
        for n in (1, 2, 2**31 + rep, 2**31 + 16, 2**40 + 32 * rep, 2**63 + 16, 2**63 + 17, 5):
            add_kernel[(1, )](x, y, out, n, BLOCK=64)  # across 1, i32/i64/u64 and div 16
        x.dtype = torch.float16  # the same object retyped, then back
        add_kernel[(1, )](x, y, out, 64, BLOCK=64)
        x.dtype = torch.float32
        add_kernel[(1, )](x, y, out, 64, BLOCK=64)
        x._ptr += 4  # the same object moved: misaligned, then back
        add_kernel[(1, )](x, y, out, 64, BLOCK=64)
        x._ptr -= 4
        add_kernel[(1, )](x, y, out, 64, BLOCK=64)
        x._ptr += 512  # moved, still aligned: the same key, a new pointer
        add_kernel[(1, )](x, y, out, 64, BLOCK=64)
        add_kernel[(1, )](y, x, out, 64, BLOCK=64)  # tensors swapped
        add_kernel[(1, )](x, y, out, 64, BLOCK=128)  # a constexpr changed
        add_kernel[(1, )](x, y, out, 64, BLOCK=128, num_warps=2)  # an option
        add_kernel[(1, )](x, y, out, 64, BLOCK=128)
        for f, b in ((0.5, True), (0.25, True), (1.0, False), (float(rep), False)):
            scalars_kernel[(1, )](x, f, b, None, 5, 7, BLOCK=8)  # floats and bools: new values, one key
        scalars_kernel[(1, )](x, 0.5, True, 3, 5, 7, BLOCK=8)  # None -> an int
        scalars_kernel[(1, )](x, 0.5, True, None, 5, 8, BLOCK=8)  # the annotated int
        scalars_kernel[(1, )](x, 2, True, None, 5, 7, BLOCK=8)  # a float -> an int
        scalars_kernel[(1, )](x, 0.5, 1, None, 5, 7, BLOCK=8)  # a bool -> an int
        scalars_kernel[(1, )](x, 0.5, True, None, 1, 7, BLOCK=8)  # an int -> 1
        knobs.runtime.debug = True  # a knob the key carries
        add_kernel[(1, )](x, y, out, 64, BLOCK=128)
        knobs.runtime.debug = False
        add_kernel[(1, )](x, y, out, 64, BLOCK=128)
        torch._set_device(1)  # another device
        add_kernel[(1, )](x, y, out, 64, BLOCK=128)
        torch._set_device(0)
        add_kernel[(1, )](x, y, out, 64, BLOCK=128)
        dns_kernel[(1, )](x, 16 + rep, 33)  # do_not_specialize: any int of a class
        dns_kernel[(1, )](x, 1, 32 + 16 * rep)
        # several recent hits per kernel (FP_LAST_N slots): keys alternating,
        # an int in and out of div 16, more keys than slots in turn
        for blk in (64, 128, 64, 128, 64):
            add_kernel[(1, )](x, y, out, 64, BLOCK=blk)
        for n in (63, 64, 65, 80, 81, 96, 97, 2**31 + 16, 99):
            add_kernel[(1, )](x, y, out, n, BLOCK=64)
        for k in (0, 1, 2, 3, 4, 5, 0, 1, 5, 4, 0):
            add_kernel[(1, )](x, y, out, 64, BLOCK=16 << k)
        x._ptr += 4  # a tensor that matches no slot, read once for all of them
        add_kernel[(1, )](x, y, out, 64, BLOCK=64)
        x._ptr -= 4
        for s in (40, 41, 42, 48, 1, 2, 1, 43 + rep):  # annotated ints: new objects, one class or another
            annint_kernel[(1, )](x, s, s, s, s, BLOCK=8)
        for s in (2**31, 2**31 + 16):  # past the annotation's i32: keyed exactly, Triton raises
            try:
                annint_kernel[(1, )](x, s, s, s, s, BLOCK=8)
            except OverflowError as e:
                print("annint:", e)
        for v in ("512", "512", "1024", "512"):  # constexpr and annotated: new int objects, equal or not
            add_kernel[(1, )](x, y, out, 64, BLOCK=int(v))
            scalars_kernel[(1, )](x, 0.5, True, None, 5, int(v), BLOCK=8)
    print("lastcall done")


def alternate():
    # two block sizes in turn and an int in and out of div 16: after the
    # first hit of each of the three keys, every hit takes one of the
    # kernel's last hits (FP_LAST_N slots); one slot would key them all
    x, y, out = torch.empty(4096), torch.empty(4096), torch.empty(4096)
    for i in range(N):
        add_kernel[(1, )](x, y, out, 64 + i % 2, BLOCK=64)
        add_kernel[(1, )](x, y, out, 64, BLOCK=128)
    print("alternate done")


def reload():
    # Triton's CompiledKernel given another function of the same kernel (a
    # module loaded twice: two threads' first calls can race to load it):
    # Triton launches the new one from then on, and so must a replay
    x = torch.empty(64)
    for i in range(N):
        k = add_kernel[(1, )](x, x, x, 64, BLOCK=64)
    k._load("add_kernel_reloaded")
    for i in range(N):
        add_kernel[(1, )](x, x, x, 64, BLOCK=64)
    print("reload done")


def subclass():
    # subclasses of JITFunction (made after the fast path installed its C
    # __getitem__ in JITFunction's slot): Triton's own path, counted as
    # "class"; one with its own __getitem__ is called through it
    from triton.runtime.jit import JITFunction

    class Sub(JITFunction):
        pass

    class Own(JITFunction):
        def __getitem__(self, grid):
            print("own getitem", grid)
            return super().__getitem__(grid)

    x = torch.empty(64)
    for cls in (Sub, Own):
        k = cls(add_kernel.fn)
        for i in range(3):
            k[(1 + i, )](x, x, x, 64, BLOCK=64)
    add_kernel[(2, )](x, x, x, 64, BLOCK=64)  # the plain one, after them

    # another KernelInterface subclass (FlagGems' LibEntry, Triton's
    # Heuristics): kernel[grid](...) is self.run(grid=grid, warmup=False,
    # *args, **kwargs), whatever calls it (a launcher of trlat's or the
    # lambda), raising what run raises or what the call itself raises
    class Wrap(triton.KernelInterface):
        def __init__(self, fn):
            self.fn = fn

        def run(self, *args, **kwargs):
            print("wrap run", len(args), sorted(kwargs.items()) if "x" not in kwargs else sorted(kwargs))
            if kwargs.get("BLOCK") == 0:
                raise ValueError("BLOCK 0")
            return self.fn.run(*args, **kwargs)

    w, g = Wrap(add_kernel), (1, )
    f = w[g]
    print("subclass launcher", type(f).__name__, file=sys.stderr)
    for i in range(3):
        f(x, x, x, 64 + i, BLOCK=64)
        w[(i + 1, )](x, x, x, 64, BLOCK=64)
    w[g](x=x, y=x, out=x, n=64, BLOCK=32)
    for bad in ({"BLOCK": 0}, {"BLOCK": 64, "grid": (1, )}, {"BLOCK": 64, "warmup": True}):
        try:
            w[g](x, x, x, 64, **bad)
        except (TypeError, ValueError) as e:
            print("raised", type(e).__name__, e)
    print("subclass done")


def launchers():
    # kernel[grid] objects handed out again for held tuple grids (getitem.c
    # keeps 8): more (kernel, grid) pairs than it keeps, a launcher the
    # program holds and calls between them (never handed out twice), grids
    # built per call, and a grid function nothing may keep alive
    import gc
    import weakref
    x = torch.empty(4096)
    add_kernel[(1, )](x, x, x, 64, BLOCK=64)  # the C __getitem__ is installed by the first call
    grids = [(i + 1, ) for i in range(10)]
    held = add_kernel[grids[0]]
    print("held launcher handed out again:", add_kernel[grids[0]] is held)
    for r in range(N):
        for i, g in enumerate(grids):
            if i % 3 == 2:
                nop_kernel[g]()
            else:
                add_kernel[g](x, x, x, 64 + i, BLOCK=64)
            held(x, x, x, 32 + r, BLOCK=64)
        add_kernel[(r % 3 + 1, )](x, x, x, 16, BLOCK=64)
    f = lambda meta: (2, )  # noqa: E731
    ref = weakref.ref(f)
    add_kernel[f](x, x, x, 64, BLOCK=64)
    del f
    gc.collect()
    print("grid function freed:", ref() is None)
    print("launchers done")


def add_wrapped(x, n):
    """A kernel launched from one of the program's functions (its frame is
    new on every call): the call site is this line."""
    add_kernel[(cdiv(n, 128), )](x, x, x, n, BLOCK=128)


def wrapped():
    x = torch.empty(4096)
    for i in range(N):
        add_wrapped(x, 64 + i % 3)
        (lambda: add_kernel[(1, )](x, x, x, 32, BLOCK=128))()  # and from a lambda's frame
    print("wrapped done")


def switch():
    """The run-time switches (trlat_api_fastpath, trlat_api_profiling) between
    blocks of N identical calls: on, off, on again, profiling paused, resumed."""
    import ctypes
    api = ctypes.CDLL(None)
    x = torch.empty(4096)

    def calls():
        for _ in range(N):
            add_kernel[(1, )](x, x, x, 64, BLOCK=128)

    calls()
    print("fastpath was", api.trlat_api_fastpath(0))
    calls()
    print("fastpath was", api.trlat_api_fastpath(1))
    calls()
    print("profiling was", api.trlat_api_profiling(0))
    calls()
    print("profiling was", api.trlat_api_profiling(1))
    calls()
    print("switch done")


class Cached(triton.KernelInterface):
    """A library's wrapper that keeps the CompiledKernel its first call
    returned and launches it with compiled[grid] from then on (FlagGems'
    LibEntry, reduced)."""

    def __init__(self, fn):
        self.fn = fn
        self.cache = {}

    def run(self, *args, grid, warmup, **kwargs):
        key = tuple(type(a) for a in args) + tuple(sorted(kwargs.items()))
        kernel = self.cache.get(key)
        if kernel is None:
            kernel = self.cache[key] = self.fn.run(*args, grid=grid, warmup=warmup, **kwargs)
            return kernel
        kernel[(grid + (1, 1))[0:3]](*args, *kwargs.values())
        return kernel


def compiled():
    """Compiled kernels launched directly, through the launcher memo:
    compiled[grid](...) (trlat's C runner, or Triton's closure), an explicit
    stream, CompiledKernel.run(...), a library's cached kernels; grids,
    values and argument kinds changing; what the launcher rejects raised as
    it raises; the launch hooks set for a while (the closure runs)."""
    x = torch.empty(4096)
    k = add_kernel[(1, )](x, x, x, 64, BLOCK=64)
    s = scalars_kernel[(1, )](x, 1.5, True, None, 7, 9, BLOCK=32)
    c = cluster_kernel[(2, )](x, 64)
    cached = Cached(add_kernel)
    held = k[(1, 1, 1)]  # a runner the program holds: never handed out again meanwhile
    for i in range(N):
        k[(1 + i % 3, 1, 1)](x, x, x, 64 + 16 * i, 64)
        held(x, x, x, 96, 64)
        k[(2, 1, 1)](x, x.view_at(1), x, 64, 64)  # a misaligned pointer: a compiled kernel packs it as it is
        k[(1, 1, 1)](x, x, x, 80, 64, stream=0x1234)
        k[(1, 2, 1)](x, x, x, 80, 64, stream=None)
        k[(0, 1, 1)](x, x, x, 64, 64)  # an empty grid: nothing launched
        k[[1, 1, 1]](x, x, x, 64, 64)  # a list grid: Triton's closure
        k.run(2, 1, 1, 0, k.function, k.packed_metadata, None, None, None, x, None, 2**40, 5 + i, "ignored")
        s[(1, 1, 1)](x, 2.5 + i, i % 2 == 0, None, i - 3, 2**31 - 1 - i, 32)
        s[(1, 1, 1)](x, i, False, None, -2**31, 0, 32)  # an int where the kernel takes fp32
        c[(2 * (1 + i % 2), 1, 1)](x, 64 + i)
        cached[(1 + i % 2, )](x, x, x, 64 + i, BLOCK=64)
    for bad in ((x, x, x, 2**31, 64), (x, x, x, 2.5, 64), (x, "a", x, 64, 64), (x, x, x, 64)):
        try:
            k[(1, 1, 1)](*bad)
        except (OverflowError, TypeError) as e:
            print("compiled: rejected:", type(e).__name__, e)
    try:
        k[(1, )](x, x, x, 64, 64)
    except IndexError as e:
        print("compiled: short grid:", e)
    seen = []
    knobs.runtime.launch_enter_hook.add(seen.append)
    for i in range(N):
        k[(1, 1, 1)](x, x, x, 64 + i, 64)
    knobs.runtime.launch_enter_hook.remove(seen.append)
    print("compiled: hook saw", len(seen), [sorted(m) if m else m for m in seen[:1]])
    for i in range(N):
        k[(3, 1, 1)](x, x, x, 64, 64)
    # a launch_metadata set on the instance: Triton's closure calls it
    calls = []
    k.launch_metadata = lambda grid, stream, *args: calls.append(grid)
    for i in range(N):
        k[(2, 2, 1)](x, x, x, 64, 64)
    del k.launch_metadata
    print("compiled: the instance's launch_metadata called", len(calls), "times")
    # the warm-up kernel's launcher was made before the hook: its calls
    # through the launcher are counted (launcher) until compiled[grid]
    # learns it from the kernel
    wk = warm_kernel[(1, )]()
    for _ in range(N):
        wk.run(1, 1, 1, 0, wk.function, wk.packed_metadata, None, None, None)
    for _ in range(N):
        wk[(1, 1, 1)]()
    for _ in range(N):
        wk.run(1, 1, 1, 0, wk.function, wk.packed_metadata, None, None, None)
    print("compiled done")


class Strided:
    """FlagGems' StridedBuffer: not a tensor; a dtype and data_ptr()."""

    def __init__(self, base, offset=0):
        self._base = base
        self.dtype = base.dtype
        self._data_ptr = base.data_ptr() + offset * base.dtype.itemsize

    def data_ptr(self):
        return self._data_ptr


def ptrobj():
    """Objects with data_ptr() that are not tensors: a new one each call,
    one misaligned, one changed between calls; the driver asked about an
    allocation once, and again after a free; host memory (Triton raises)."""
    import ctypes
    cuda = ctypes.CDLL("libcuda.so.1")
    asks = lambda: cuda.fake_cuda_calls(b"cuPointerGetAttributes")  # noqa: E731
    x, out = torch.empty(4096), torch.empty(4096)
    for _ in range(N):
        add_kernel[(1, )](Strided(x), Strided(x), out, 64, BLOCK=64)
        add_kernel[(1, )](Strided(x, 1), x, out, 64, BLOCK=64)
    s = Strided(x)
    for i in range(N):
        s._data_ptr = x.data_ptr() + (i % 2) * 4
        add_kernel[(1, )](s, x, out, 64, BLOCK=64)
    before = asks()
    # freed through the entry point cuGetProcAddress hands out (as the CUDA
    # runtime gets it), then through the exported symbol
    free = ctypes.c_void_p()
    cuda.cuGetProcAddress_v2(b"cuMemFree", ctypes.byref(free), 12000, ctypes.c_uint64(0), None)
    ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_uint64)(free.value)(0x7f7000000000)
    for _ in range(N):
        add_kernel[(1, )](Strided(x), x, out, 64, BLOCK=64)
    after = asks()
    cuda.cuMemFree_v2(ctypes.c_uint64(0x7f7000000000))
    for _ in range(N):
        add_kernel[(1, )](Strided(x), x, out, 64, BLOCK=64)
    after2 = asks()
    h = Strided(x)
    h._data_ptr = 0x555500000000
    for _ in range(3):
        try:
            add_kernel[(1, )](h, x, out, 64, BLOCK=64)
            print("host memory: launched")
        except ValueError as e:
            print("host memory: raised", e)
    k = add_kernel[(1, )](x, x, out, 64, BLOCK=64)
    for _ in range(N):  # compiled[grid]: the launcher's own getPointer
        k[(1, 1, 1)](Strided(x), x, out, 64, 64)
    try:
        k[(1, 1, 1)](h, x, out, 64, 64)
        print("host memory, compiled: launched")
    except ValueError as e:
        print("host memory, compiled: raised", e)
    print("driver asked: %d before the frees, %d after one, %d after two, %d with host memory" %
          (before, after, after2, asks()), file=sys.stderr)
    print("ptrobj done")


def getters():
    """data_ptr() methods of objects that are not tensors, read without a
    call only where the method is `return self.<attribute>`
    (fastpath/getter.c): the attribute changed between calls, a property
    behind it, and methods that are not that: computed, shadowed by the
    instance, its code replaced, a class with __getattr__, the attribute
    missing."""
    x, out = torch.empty(4096), torch.empty(4096)
    base = x.data_ptr()

    class Typed:  # FlagGems' TypedPtr
        def __init__(self, ptr):
            self.ptr = ptr
            self.dtype = x.dtype

        def data_ptr(self) -> int:
            return self.ptr

    class Computed:
        def __init__(self, ptr):
            self.ptr = ptr
            self.dtype = x.dtype

        def data_ptr(self):
            return self.ptr + 16

    class Prop:
        dtype = x.dtype

        @property
        def _data_ptr(self):
            return base + 32

        def data_ptr(self):
            return self._data_ptr

    class Fallback:
        dtype = x.dtype

        def __getattr__(self, name):
            return base + 16

        def data_ptr(self):
            return self._data_ptr

    class Replaced:
        def __init__(self):
            self._data_ptr = base
            self.dtype = x.dtype

        def data_ptr(self):
            return self._data_ptr

    strided, typed = Strided(x), Typed(base)
    shadow = Strided(x)
    shadow.data_ptr = lambda: base + 64
    gone = Strided(x)
    del gone._data_ptr
    objs = [("strided", strided), ("typed", typed), ("computed", Computed(base)), ("property", Prop()),
            ("shadowed", shadow), ("getattr", Fallback()), ("replaced", Replaced()), ("missing", gone)]
    k = add_kernel[(1, )](x, x, out, 64, BLOCK=64)
    for i in range(N):
        if i == N // 2:
            Replaced.data_ptr.__code__ = (lambda self: self._data_ptr + 48).__code__
        strided._data_ptr = base + 16 * (i % 3)
        typed.ptr = base + 16 * (i % 2)
        for name, o in objs:
            for how, launch in (("jit", lambda: add_kernel[(1, )](o, x, out, 64, BLOCK=64)),
                                ("compiled", lambda: k[(1, 1, 1)](o, x, out, 64, 64))):
                try:
                    launch()
                except AttributeError as e:
                    print(name, how, "raised", e) if i == 0 else None
    print("getters done")


@triton.jit
def tma_kernel(a, b, c, M, N, BLOCK: tl.constexpr):
    pass


_TMA = {"swizzle": 3, "elem_size": 4, "elem_type": 7, "block_size": [2, 16], "fp4_padded": False}
tma_kernel.fn.fake_meta = {"tensordesc_meta": [_TMA, _TMA, dict(_TMA, block_size=[4, 16])]}


@triton.jit
def desc_kernel(a, n):  # no tensordesc_meta: the launcher decomposes the descriptor
    pass


@triton.jit
def strconst_kernel(x, n, DT: tl.constexpr):  # FlagGems' mm: dtype=str(a.dtype).split(".")[-1]
    pass


def tmadesc():
    """Host tensor descriptors (TensorDescriptor) through compiled kernels: a
    library that keeps the CompiledKernel and makes new descriptors over a
    few buffers on every call (FlagGems' mm), shapes changing, a field
    changed between calls, a decomposed descriptor; what the launcher or the
    driver's encoder rejects raised as it raises, each time."""
    import ctypes
    from triton.tools.tensor_descriptor import TensorDescriptor as TD
    cuda = ctypes.CDLL("libcuda.so.1")
    encodes = lambda: cuda.fake_cuda_calls(b"cuTensorMapEncodeTiled")  # noqa: E731
    a = [torch.empty(1024) for _ in range(3)]
    b, c = torch.empty(1024), [torch.empty(1024) for _ in range(2)]
    cached = Cached(tma_kernel)
    d = lambda t, m, n, blk=(2, 16): TD(t, torch.Size((m, n)), (n, 1), list(blk))  # noqa: E731
    for i in range(N):
        m = 16 if i < N // 2 else 8
        cached[(1 + i % 2, )](d(a[i % 3], m, 32), d(b, 32, 32), d(c[i % 2], m, 32, (4, 16)), m, 32, BLOCK=16)
    k = tma_kernel[(1, )](d(a[0], 16, 32), d(b, 32, 32), d(c[0], 16, 32, (4, 16)), 16, 32, BLOCK=16)
    x = d(a[1], 16, 32)
    for i in range(N):
        x.padding = "nan" if i % 2 else "zero"
        k[(2, 1, 1)](x, d(b, 32, 32), d(c[1], 16, 32, (4, 16)), 16, 32, 16)
    raw = desc_kernel[(1, )](d(a[2], 16, 32), 512)
    for i in range(N):
        raw[(1, 1, 1)](d(a[i % 2], 16, 32), 512 + i)
    bad = d(a[0], 16, 32)
    bad.strides = (32, 2)  # the launcher asserts a contiguous last dimension
    odd = TD(a[0].view_at(2), (16, 32), (32, 1), [2, 16])  # misaligned (8 bytes in): the encoder refuses
    host = d(torch.empty(1024, device="cpu"), 16, 32)  # host memory: the launcher's to encode
    for _ in range(3):
        for what, desc in (("strides", bad), ("misaligned", odd), ("host", host)):
            try:
                k[(1, 1, 1)](desc, d(b, 32, 32), d(c[0], 16, 32, (4, 16)), 16, 32, 16)
                print("tma", what, "launched")
            except (AssertionError, RuntimeError) as e:
                print("tma", what, "raised", type(e).__name__)
    print("encoded %d tensor maps" % encodes(), file=sys.stderr)
    print("tmadesc done")


@triton.jit
def ind_pointwise_kernel(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    pass


@triton.jit
def ind_2d_kernel(in_ptr0, out_ptr0, ynumel, xnumel, YBLOCK: tl.constexpr, XBLOCK: tl.constexpr):
    pass


def inductor():
    """Inductor's CachingAutotuner.run (the stand-in torch/_inductor):
    served above its generated launcher while run() would only call it
    (pointwise and 2-D grids, after autotuning to one config or
    coordinate descent, a launcher replaced); never above it while run()
    would do more or other (the profiler or a DebugMode on, a launch hook
    added, params dumped, a cubin stored, coordinate descent that finds
    nothing, the program's own allocator set, another device type's
    allocator) or for a launcher whose runner is neither Triton's nor torch's
    static launcher (another class's). torch's static launcher served above
    its launcher, and below it when its launcher is called directly.
    sys.setprofile counts each autotuner's launcher calls and the static
    launcher's run calls (on stderr): all of them run with the fast path
    off.""" 
    from torch._inductor.runtime import triton_heuristics as th
    from torch.autograd import profiler
    from torch.utils import _debug_mode
    from triton.runtime import _allocation
    x, y = torch.empty(4096), torch.empty(4096)
    pw = {"in_ptr0": "*fp32", "out_ptr0": "*fp32", "xnumel": "i32", "XBLOCK": "constexpr"}

    def tuner(kernel, configs, example, **meta):
        props = th.DeviceProperties(meta.pop("device_type", "cuda"))
        return th.CachingAutotuner(kernel, {"device": props, "signature": pw, "example_args": example},
                                   [th.Config(c) for c in configs], inductor_meta=meta,
                                   static=meta.pop("static", False))

    one = lambda: tuner(ind_pointwise_kernel, [{"XBLOCK": 128}], (x, y, 64))  # noqa: E731
    t = {
        "pointwise": tuner(ind_pointwise_kernel, [{"XBLOCK": 256}], (x, y, 64)),
        "2d": tuner(ind_2d_kernel, [{"YBLOCK": 8, "XBLOCK": 64}], (x, y, 16, 64), grid=("xnumel", "ynumel"),
                    max_y_grid=3),
        "autotuned": tuner(ind_pointwise_kernel, [{"XBLOCK": 64}, {"XBLOCK": 512}], (x, y, 64)),
        "coordesc": tuner(ind_pointwise_kernel, [{"XBLOCK": 32}], (x, y, 64), coordinate_descent_tuning=True),
        "coordesc_none": tuner(ind_pointwise_kernel, [{"XBLOCK": 32}], (x, y, 64), coordinate_descent_tuning=True,
                               coordesc_finds=False),
        "replaced": one(),
        "profiler": one(),
        "debug": one(),
        "hook": one(),
        "dump": one(),
        "dump_tensors": one(),
        "store_cubin": tuner(ind_pointwise_kernel, [{"XBLOCK": 128}], (x, y, 64), store_cubin=True),
        "own_allocator": one(),
        "static": tuner(ind_pointwise_kernel, [{"XBLOCK": 128}], (x, y, 64), static=True),
        "static_2d": tuner(ind_2d_kernel, [{"YBLOCK": 4, "XBLOCK": 32}], (x, y, 16, 64), grid=("xnumel", "ynumel"),
                           static=True),
        "static_direct": tuner(ind_pointwise_kernel, [{"XBLOCK": 64}], (x, y, 64), static=True),
        "other_runner": tuner(ind_pointwise_kernel, [{"XBLOCK": 128}], (x, y, 64), static="other"),
    }
    t["dump"].dump_launch_params = True
    t["dump_tensors"].dump_launch_tensors = True
    for a in t.values():  # precompiled, as the generated module's kernels are
        if a is not t["autotuned"]:
            a.precompile()
    label = {}

    def labels():
        for name, a in t.items():
            for la in a.launchers:
                label[id(la.__code__)] = name  # code objects of the same text compare equal

    calls = {}

    def prof(frame, event, arg):
        if event == "call" and frame.f_code.co_name == "launcher":
            labels()
            name = label.get(id(frame.f_code), "?")
            calls[name] = calls.get(name, 0) + 1
        elif event == "call" and frame.f_code.co_name == "run" and "static_triton" in frame.f_code.co_filename:
            calls["static_run"] = calls.get("static_run", 0) + 1  # StaticallyLaunchedTritonKernel.run

    seen, allocators = [], []
    own = lambda size, align, stream: None  # noqa: E731

    def allocator():
        a = _allocation._allocator.get()
        cell = (a.__closure__ or [None])[0]
        return cell.cell_contents.device_props.type if cell else getattr(a, "__name__", type(a).__name__)

    sys.setprofile(prof)
    try:
        for i in range(N):
            s = 0x1234 if i % 3 == 2 else 0
            t["pointwise"].run(x, y, 64 + 100 * i, stream=s)
            t["2d"].run(x, y, 8 + 3 * i, 64 + 50 * i, stream=s)
            t["autotuned"].run(x, y, 64 + i, stream=s)
            t["coordesc"].run(x, y, 64, stream=s)
            t["coordesc_none"].run(x, y, 64, stream=s)
            if i == N // 2:
                r = one()
                r.precompile()
                t["replaced"].launchers = r.launchers  # as a re-autotune leaves it
            t["replaced"].run(x, y, 300 + i, stream=s)
            with profiler.profile():
                t["profiler"].run(x, y, 64, stream=s)
            with _debug_mode.DebugMode() as dm:
                t["debug"].run(x, y, 64, stream=s)
            seen.append(len(dm.calls))
            knobs.runtime.launch_enter_hook.add(seen.append)
            t["hook"].run(x, y, 64 + i, stream=s)
            knobs.runtime.launch_enter_hook.remove(seen.append)
            t["dump"].run(x, y, 64, stream=s)
            t["dump_tensors"].run(x, y, 64, stream=s)
            t["store_cubin"].run(x, y, 64, stream=s)
            triton.set_allocator(own)
            t["own_allocator"].run(x, y, 64, stream=s)
            allocators.append(allocator())
            t["static"].run(x, y, 64 + i, stream=s)
            t["static_2d"].run(x, y, 8 + 3 * i, 64 + 50 * i, stream=s)
            t["static_direct"].launchers[0](x, None if i % 2 else y, 64 + 7 * i, stream=s)  # not through run()
            t["other_runner"].run(x, y, 64 + i, stream=s)
        xpu = tuner(ind_pointwise_kernel, [{"XBLOCK": 128}], (x, y, 64), device_type="xpu")
        xpu.precompile()
        t["xpu"] = xpu
        for i in range(N):  # alternating with another device type's autotuner: its allocator differs
            xpu.run(x, y, 64, stream=0)
            allocators.append(allocator())
            t["pointwise"].run(x, y, 64, stream=0)
            allocators.append(allocator())
    finally:
        sys.setprofile(None)
    print("inductor: profiler records", len(torch._C._profiler._RecordFunctionFast.records))
    print("inductor: debug mode recorded", seen.count(1), "hook saw",
          sum(1 for m in seen if isinstance(m, dict)))
    print("inductor: dumped", len(th.dumped), "saved", len(th.saved), "tuned", sorted(set(th.tuned)), len(th.tuned))
    print("inductor: allocators", sorted(set(allocators)), allocators[:3], allocators[-3:])
    print(" ".join("%s=%d" % kv for kv in sorted(calls.items())), file=sys.stderr)
    print("inductor done")


def libentry():
    """FlagGems' LibEntry (tests/fastpath/flag_gems: its class verbatim)
    around three kernels: its key by value (a new int: its first-call
    path), a callable grid, trailing parameters by keyword and default,
    StridedBuffer-like objects, a tensor descriptor, a str constexpr made
    anew on every call, what it returns; an
    entry with launch pre-hooks (one raising) and a cleared cache (run()
    runs again),
    a grid that raises, a missing constexpr."""
    from triton.tools.tensor_descriptor import TensorDescriptor
    from flag_gems.utils.libentry import LibEntry
    add, sc, ann, desc = LibEntry(add_kernel), LibEntry(scalars_kernel), LibEntry(annint_kernel), LibEntry(desc_kernel)
    strc, dts, dts_first = LibEntry(strconst_kernel), [], {}
    x, y, out = torch.empty(4096), torch.empty(4096), torch.empty(4096)
    for rep in range(N):
        for n in (64, 65, 64, 128 + rep % 3):
            r = add[(cdiv(n, 64), )](x, y, out, n, BLOCK=64)
        if rep == 0:
            print("returns", type(r).__name__, type(r[0]).__name__, sorted(r[1].items()))
        add[lambda meta: (cdiv(meta["n"], meta["BLOCK"]), meta["BLOCK"] // 16)](x, y, out, 100, BLOCK=32)
        # a cached entry's call with a keyword that repeats a positional
        # argument: meta has the keyword's value (as a grid program reads it)
        g8 = lambda meta: (meta["n"] // 8, )  # noqa: E731
        add[g8](x, y, out, 100 + rep % 2, BLOCK=32)
        add[g8](x, y, out, 100 + rep % 2, BLOCK=32, n=9)
        for bad in (lambda meta: [meta["n"] // 8], lambda meta: (meta["nope"], )):
            try:  # a list: run() raises at grid + (1, 1); a key meta lacks raises in the grid
                add[bad](x, y, out, 100, BLOCK=32)
            except (TypeError, KeyError) as e:
                print("grid function:", type(e).__name__, e) if rep < 2 else None
        add[(2, )](x, y, out, n=77, BLOCK=16)  # a trailing parameter by keyword
        try:
            add[[3]](x, y, out, 50, BLOCK=16)  # a list grid: cached, run() raises at grid + (1, 1)
        except TypeError as e:
            print("list grid:", e) if rep < 2 else None
        sc[(1, )](x, 0.5 + rep % 2, True, None, 5, 7, BLOCK=8)
        ann[(1, 2)](x, 3 + rep % 2, 5, 7, 9, BLOCK=8)
        add[(1, )](Strided(x, 16 * (rep % 2)), Strided(y), out, 64, BLOCK=64)
        desc[(1, )](TensorDescriptor(x, [64, 64], [64, 1], [16, 16]), 64)
        for dt in ("float32", "float16"):  # a str made anew on every call; equal ones take the last keys
            r = strc[(1, )](x, 64, DT="".join(("float", dt[5:])))
            dts.append(r[0] is dts_first.setdefault(dt, r[0]))  # the kernel of that str's entry
        if rep == N // 2:
            cache = add.kernel_cache[0]
            k = next(iter(cache))
            kern, c, t, h, _ = cache[k]

            def hook1(nargs):  # each hook its own dict: what it changes, the next one does not see
                print("pre-hook 1", sorted(nargs), nargs["EXTRA"], nargs["n"], nargs["grid"])
                nargs["EXTRA"] = 99

            def hook2(nargs):
                print("pre-hook 2", nargs["EXTRA"])
                if nargs.get("RAISE"):
                    raise ValueError("pre-hook raised")

            cache[k] = (kern, c, t, h, ((hook1, {"EXTRA": 1}), (hook2, {"EXTRA": 2})))
            for _ in range(2):
                add[(1, )](x, y, out, 64, BLOCK=64)
            cache[k] = (kern, c, t, h, ((hook2, {"EXTRA": 3, "RAISE": 1}), ))
            try:
                add[(1, )](x, y, out, 64, BLOCK=64)  # raises before the launch
            except ValueError as e:
                print("raised:", e)
            cache.clear()
    calls = []

    def grid_then_raise(meta):  # the first call (run()'s first-call path) returns, then it raises
        calls.append(sorted(meta))
        if len(calls) > 1:
            raise ZeroDivisionError("grid %d" % len(calls))
        return (1, )

    for _ in range(3):
        try:
            add[grid_then_raise](x, y, out, 33, BLOCK=64)
        except ZeroDivisionError as e:
            print("grid raised:", e)
    print("grid meta", calls[-1])

    def grid_clears(meta):  # the entry the hit took is dropped from the cache meanwhile
        add.kernel_cache[0].clear()
        return (2, )

    for _ in range(3):
        r = add[grid_clears](x, y, out, 48, BLOCK=64)
    print("cleared by the grid:", type(r[0]).__name__, len(add.kernel_cache[0]))

    def grid_raises(meta):  # raised inside a first call's `with self.lock`
        raise ZeroDivisionError("first call's grid")

    for n in (40, 40, 41):
        try:
            add[grid_raises](x, y, out, n, BLOCK=64)
        except ZeroDivisionError as e:
            print("first call raised:", e, len(add.kernel_cache[0]))
        r = add[(1, )](x, y, out, n, BLOCK=64)  # the lock was released: its first call runs
        print("then", n, type(r[0]).__name__, sorted(r[1].items()), len(add.kernel_cache[0]))

    # a LibEntry around Triton's Heuristics, and around one Heuristics in
    # another: its first-call path calls each heuristic with run()'s dict
    # (the call's arguments by name, its keywords, the constexprs so far:
    # seen records its keys in order), its hits use the stored values
    from triton.runtime import autotuner
    autotuner.install()  # triton.runtime.Heuristics, as Triton's
    Heuristics = triton.runtime.Heuristics

    seen = []

    def h_block(a):
        seen.append(",".join(a))
        return 64 if a["n"] > 64 else 32

    def h_outer(a):  # the inner one's value comes after it in run()'s dict
        seen.append(",".join(a))
        return 16

    names = add_kernel.arg_names
    heur = LibEntry(Heuristics(add_kernel, names, {"BLOCK": h_block}))
    heur2 = LibEntry(Heuristics(Heuristics(add_kernel, names, {"BLOCK": h_block}), names, {"BLOCK": h_outer}))
    for rep in range(N):
        for n in (64, 100, 64, 200 + rep):
            r = heur[(1, )](x, y, out, n)
            r2 = heur2[(1, )](x, y, out, n=n)
    ncalls = [0]

    def h_raises(a):  # its 4th call, after the launch of a first call, raises inside `with self.lock`
        ncalls[0] += 1
        if ncalls[0] == 4:
            raise ValueError("heuristic raised")
        return 32

    heur3 = LibEntry(Heuristics(add_kernel, names, {"BLOCK": h_raises}))
    for n in (10, 11, 11, 12):
        try:
            r3 = heur3[(1, )](x, y, out, n)
            print("heuristic", n, sorted(r3[1].items()), len(heur3.kernel_cache[0]))
        except ValueError as e:
            print("heuristic", n, "raised:", e, len(heur3.kernel_cache[0]))
    for le, res in ((heur, r), (heur2, r2)):
        e = le.kernel_cache[0][next(iter(le.kernel_cache[0]))]
        print("heuristics:", sorted(res[1].items()), list(e[1].items()), list(e[3].items()))
    print("heuristics' dicts:", len(seen), sorted(set(seen)))
    print("str constexpr calls that returned their str's kernel:", dts.count(True), "of", len(dts))
    print("libentry done")


def libentry_reads():
    """LibEntry's key reads of StridedBuffer-like objects, taken again by
    the launch of the same call only where no Python ran between
    (fastpath/getter.c): a tuple grid (taken), a grid function and a launch
    pre-hook that move a buffer (the launch has the new pointer), and
    attributes behind properties, read as often as without trlat."""
    from flag_gems.utils.libentry import LibEntry
    add = LibEntry(add_kernel)
    x, y, out = torch.empty(4096), torch.empty(4096), torch.empty(4096)
    reads = {"_data_ptr": 0, "dtype": 0}
    first = {"_data_ptr": 0, "dtype": 0}  # of run()'s first-call paths

    class CountPtr:  # data_ptr() returns a property
        def __init__(self, t, tally=reads):
            self._t, self.dtype, self._tally = t, t.dtype, tally

        @property
        def _data_ptr(self):
            self._tally["_data_ptr"] += 1
            return self._t.data_ptr()

        def data_ptr(self):
            return self._data_ptr

    class CountDtype:  # dtype a property
        def __init__(self, t, tally=reads):
            self._t, self._data_ptr, self._tally = t, t.data_ptr(), tally

        @property
        def dtype(self):
            self._tally["dtype"] += 1
            return self._t.dtype

        def data_ptr(self):
            return self._data_ptr

    for rep in range(N):
        add[(1, )](Strided(x, 16 * (rep % 2)), Strided(y), out, 64, BLOCK=64)
        b = Strided(x)

        def move(meta, b=b, rep=rep):  # after the key read it, before the launch does
            b._data_ptr = x.data_ptr() + 64 * (1 + rep % 2)
            return (1, )

        add[move](b, Strided(y), out, 64, BLOCK=64)
        add[(1, )](CountPtr(x), CountDtype(y), out, 64, BLOCK=64)
        add[(1, )](CountPtr(x, first), CountDtype(y, first), out, 65 + rep, BLOCK=64)  # a new key
    cache = add.kernel_cache[0]
    k = next(iter(cache))
    kern, c, t, h, _ = cache[k]

    def hook(nargs):
        nargs["x"]._data_ptr = x.data_ptr() + 128

    cache[k] = (kern, c, t, h, ((hook, {}), ))
    for _ in range(2):
        add[(1, )](Strided(x), Strided(y), out, 64, BLOCK=64)
    cache[k] = (kern, c, t, h, ())
    # CompiledKernel.__getitem__ wrapped by the program: run()'s
    # kernel[grid] goes through the wrapper, served or not
    from triton.compiler.compiler import CompiledKernel
    inner, wrapped = CompiledKernel.__getitem__, []

    def getitem(self, grid):
        wrapped.append(grid)
        return inner(self, grid)

    CompiledKernel.__getitem__ = getitem
    for _ in range(3):
        add[(1, )](Strided(x), Strided(y), out, 64, BLOCK=64)
    CompiledKernel.__getitem__ = inner
    print("wrapped __getitem__ called", len(wrapped))
    print("reads", sorted(reads.items()), file=sys.stderr)
    print("first-call reads", sorted(first.items()), file=sys.stderr)
    print("libentry_reads done")


def libentry_threads():
    """Four threads calling one LibEntry with the same new key at about
    the same time: run()'s first-call path under its lock, a key another
    thread stored while one waited (the original runs then)."""
    from flag_gems.utils.libentry import LibEntry
    add = LibEntry(add_kernel)
    x, y, out = torch.empty(4096), torch.empty(4096), torch.empty(4096)
    go = threading.Barrier(4)

    def work():
        for r in range(N):
            go.wait()
            add[(1, )](x, y, out, 2000 + r, BLOCK=64)

    ts = [threading.Thread(target=work) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print("libentry_threads done", len(add.kernel_cache[0]))


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
