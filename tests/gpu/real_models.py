"""The real-library workloads of bench_real_models.py, one per process:

  python3 real_models.py direct|liger|gems|compile STEPS

direct: a CompiledKernel called as compiled[grid](...) in a loop. The rest
run a tiny random-init Llama from transformers: liger, training steps with
Liger-Kernel's patches; gems, token-by-token decode with every aten op a
FlagGems Triton kernel; compile, decode through torch.compile without CUDA
graphs (its shapes change as the KV cache grows). Prints STEP_US (the
steady-state time per step) and TOKENS or LOSSES (compared across modes).
With REAL_AB=1 (under TRLAT_FASTPATH=1) the steady-state steps switch the
fast path off and on at run time (trlat_api_fastpath) in an ABBA pattern,
and AB_US gives the median step with it on and off, in this one process.
After each arm the report is flushed (trlat_api_flush, outside the timed
step) and its growth gives the arm's Triton-side host time, py->driver
plus return over the Triton-compiled kernels: AB_HOST_US gives it per step
in each arm, the profile's figure for what the fast path removes, and of
it the part a library's own KernelInterface.run took before Triton's
(py_library_ns: FlagGems' LibEntry.run), AB_LIB_US, and AB_STEADY_US the
same over calls under 1 ms (no first-call compiles or library tuning)
(REAL_AB_HOST=0: no flushes, no AB_HOST_US); AB_KERNEL lines give the
kernels with the most of it without the fast path (REAL_AB_TOP, 10). With REAL_AB_SWITCH=profiling
the arms switch profiling instead (trlat_api_profiling: recording paused
and resumed, the fast path as configured) and AB_US gives the step
recorded and paused: what profiling costs, in this one process.""" 
import ctypes
import json
import os
import sys
import time

import torch
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli"))
from common import native  # noqa: E402
from make_fixture import hist_mid  # noqa: E402  (the report's log2x8-v1 buckets)
mode, steps = sys.argv[1], int(sys.argv[2])
AB = os.environ.get("REAL_AB") == "1"
PROF_AB = os.environ.get("REAL_AB_SWITCH") == "profiling"
AB_HOST = os.environ.get("REAL_AB_HOST", "1") == "1" and not PROF_AB  # a paused arm records nothing
ab_times = {1: [], 0: []}
ab_host = {1: [0.0, 0, 0.0], 0: [0.0, 0, 0.0]}  # arm: [Triton-side ns, steps, of it the library's ns]
ab_prev = [0.0, 0.0]
ab_kern = {1: {}, 0: {}}  # arm: {kernel: [Triton-side ns, library ns, launches, misses, of it calls under 1 ms]}
# the Triton-side host time of calls under STEADY_NS (py->driver from its
# histogram, bucket midpoints; plus return): without the first calls'
# compiles and a library's tuning, which a new length in a decode brings
# and which land in whichever arm is running
STEADY_NS = 1e6
ab_steady = {1: 0.0, 0: 0.0}
ab_sprev = [0.0]
ab_kprev = {}
if AB:
    _api = ctypes.CDLL(None)
    _api.trlat_api_fastpath.argtypes = [ctypes.c_int]
    _api.trlat_api_profiling.argtypes = [ctypes.c_int]
    _switch = _api.trlat_api_profiling if PROF_AB else _api.trlat_api_fastpath
    _api.trlat_api_report_path.argtypes = [ctypes.c_char_p, ctypes.c_ulong]


def triton_side_ns():
    """The report's Triton-side host time so far (flushed now): py->driver
    plus return over the Triton-compiled kernels, and of it the library's
    own part (py_library_ns)."""
    if not AB_HOST or _api.trlat_api_flush() != 0:
        return None
    buf = ctypes.create_string_buffer(4096)
    _api.trlat_api_report_path(buf, len(buf))
    with open(buf.value.decode()) as f:
        rep = json.load(f)
    ks = [k for k in rep["kernels"] if not native(k["name"] or "")]
    per = {}
    for k in ks:
        v = per.setdefault(k["name"], [0, 0, 0, 0, 0])
        v[0] += sum((k.get(f) or {}).get("sum", 0) for f in ("py_to_driver_ns", "py_return_ns"))
        v[1] += (k.get("py_library_ns") or {}).get("sum", 0)
        v[2] += k["launches"]
        v[3] += (k.get("fastpath") or {}).get("misses", 0)
        for b, n in (k.get("py_to_driver_ns") or {}).get("hist") or []:
            mid = hist_mid(b)
            if mid < STEADY_NS:
                v[4] += mid * n
        v[4] += (k.get("py_return_ns") or {}).get("sum", 0)
    return sum(v[0] for v in per.values()), sum(v[1] for v in per.values()), per, sum(v[4] for v in per.values())


def ab_step(i):
    """Before timed step i: the arm it runs in (ABBA), switched to."""
    on = 1 if i % 4 in (0, 3) else 0
    if AB:
        torch.cuda.synchronize()
        _switch(on)
    return on, time.perf_counter()


def ab_done(arm, n=1):
    """After the arm's timed step (or n steps): its time, and from the
    flushed report its Triton-side host time."""
    if AB:
        torch.cuda.synchronize()
        ab_times[arm[0]].append(time.perf_counter() - arm[1])
        side = triton_side_ns()
        if side is not None:
            ab_host[arm[0]][0] += side[0] - ab_prev[0]
            ab_host[arm[0]][2] += side[1] - ab_prev[1]
            ab_host[arm[0]][1] += n
            ab_prev[:] = side[:2]
            for name, v in side[2].items():
                was = ab_kprev.get(name, [0, 0, 0, 0, 0])
                acc = ab_kern[arm[0]].setdefault(name, [0, 0, 0, 0, 0])
                for i in range(5):
                    acc[i] += v[i] - was[i]
            ab_kprev.clear()
            ab_kprev.update(side[2])
            ab_steady[arm[0]] += side[3] - ab_sprev[0]
            ab_sprev[0] = side[3]


def ab_start():
    """Before the first arm: the report's figure so far, the base of the first delta."""
    if AB:
        torch.cuda.synchronize()
        side = triton_side_ns()
        ab_prev[:] = side[:2] if side is not None else (0.0, 0.0)
        if side is not None:
            ab_kprev.update(side[2])
            ab_sprev[0] = side[3]


def ab_print():
    if AB and ab_times[1] and ab_times[0]:
        med = lambda xs: sorted(xs)[len(xs) // 2] * 1e6  # noqa: E731
        print("AB_US on %.1f off %.1f steps %d" % (med(ab_times[1]), med(ab_times[0]), len(ab_times[1])))
        if ab_host[1][1] and ab_host[0][1]:
            print("AB_HOST_US on %.2f off %.2f" % (ab_host[1][0] / ab_host[1][1] / 1e3, ab_host[0][0] / ab_host[0][1] / 1e3))
            print("AB_LIB_US on %.2f off %.2f" % (ab_host[1][2] / ab_host[1][1] / 1e3, ab_host[0][2] / ab_host[0][1] / 1e3))
            print("AB_STEADY_US on %.2f off %.2f" % (ab_steady[1] / ab_host[1][1] / 1e3, ab_steady[0] / ab_host[0][1] / 1e3))
            # per kernel, the largest Triton-side shares without the fast
            # path: us a step with and without it, of it the library's, the
            # calls and misses a step with it, and the calls under 1 ms
            # with and without it
            top = sorted(ab_kern[0], key=lambda n: -ab_kern[0][n][0])[:int(os.environ.get("REAL_AB_TOP", "10"))]
            for n in top:
                on, off = ab_kern[1].get(n, [0, 0, 0, 0, 0]), ab_kern[0][n]
                ps = lambda x, arm: x / ab_host[arm][1]  # noqa: E731
                print("AB_KERNEL %s on %.1f off %.1f lib_on %.1f lib_off %.1f calls %.1f misses %.2f "
                      "under_1ms_on %.1f under_1ms_off %.1f" %
                      (n, ps(on[0], 1) / 1e3, ps(off[0], 0) / 1e3, ps(on[1], 1) / 1e3, ps(off[1], 0) / 1e3,
                       ps(on[2], 1), ps(on[3], 1), ps(on[4], 1) / 1e3, ps(off[4], 0) / 1e3))
        _switch(1)
torch.manual_seed(0)
dev = "cuda"
if mode == "direct":
    import triton, triton.language as tl
    @triton.jit
    def add_kernel(x, y, o, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = i < n
        tl.store(o + i, tl.load(x + i, mask=m) + tl.load(y + i, mask=m), mask=m)
    x = torch.randn(4096, device=dev); y = torch.randn_like(x); o = torch.empty_like(x)
    c = add_kernel[(4,)](x, y, o, 4096, BLOCK=1024)
    print("compiled type", type(c), "run type", type(c.run))
    torch.cuda.synchronize()
    t = time.perf_counter()
    for i in range(steps):
        c[(4, 1, 1)](x, y, o, 4096, 1024)
    torch.cuda.synchronize()
    print("STEP_US", (time.perf_counter() - t) / steps * 1e6)
    ab_start()
    for i in range(40 if AB else 0):  # blocks of 500 launches
        arm = ab_step(i)
        for _ in range(500):
            c[(4, 1, 1)](x, y, o, 4096, 1024)
        ab_done(arm, 500)
    ab_times = {k: [v / 500 for v in vs] for k, vs in ab_times.items()}
    ab_print()
    sys.exit(0)
from transformers import LlamaConfig, LlamaForCausalLM
if mode == "liger":
    from liger_kernel.transformers import apply_liger_kernel_to_llama
    apply_liger_kernel_to_llama()
cfg = LlamaConfig(vocab_size=512, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512)
model = LlamaForCausalLM(cfg).to(dev)
if mode == "liger":
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    ids = torch.randint(0, 512, (4, 64), device=dev)
    losses = []
    for i in range(steps):
        if i == 3:
            ab_start()
            torch.cuda.synchronize(); t = time.perf_counter()
        arm = ab_step(i) if i >= 3 else None
        out = model(input_ids=ids, labels=ids)
        out.loss.backward(); opt.step(); opt.zero_grad()
        losses.append(round(out.loss.item(), 4))
        if arm:
            ab_done(arm)
    torch.cuda.synchronize()
    print("STEP_US", (time.perf_counter() - t) / (steps - 3) * 1e6)
    print("LOSSES", losses[:3], losses[-3:])
    ab_print()
    sys.exit(0)
model.eval()
fwd = model.forward
ctx = None
if mode == "compile":
    fwd = torch.compile(model.forward)
elif mode == "gems":
    import flag_gems
    ctx = flag_gems.use_gems()
    ctx.__enter__()
from transformers import DynamicCache
with torch.no_grad():
    ids = torch.randint(0, 512, (1, 8), device=dev)
    cache = DynamicCache()
    out = fwd(input_ids=ids, past_key_values=cache, use_cache=True)
    tok = out.logits[:, -1:].argmax(-1)
    toks = []
    for i in range(steps):
        if i == 5:
            ab_start()
            torch.cuda.synchronize(); t = time.perf_counter()
        arm = ab_step(i) if i >= 5 else None
        out = fwd(input_ids=tok, past_key_values=out.past_key_values, use_cache=True)
        tok = out.logits[:, -1:].argmax(-1)
        toks.append(int(tok))
        if arm:
            ab_done(arm)
    torch.cuda.synchronize()
print("STEP_US", (time.perf_counter() - t) / (steps - 5) * 1e6)
print("TOKENS", toks[:8], toks[-8:])
ab_print()
if mode == "compile":
    # which launchers Inductor's kernels hold: Triton's (CudaLauncher, which
    # the fast path serves) or torch's static CUDA launcher
    import collections
    import gc
    from torch._inductor.runtime.triton_heuristics import CachingAutotuner
    kinds = collections.Counter()
    for o in gc.get_objects():
        try:
            ours = isinstance(o, CachingAutotuner)
        except ReferenceError:  # a weakref proxy whose object is gone
            continue
        if ours:
            for fn in getattr(o, "launchers", None) or []:
                cells = [type(c.cell_contents).__name__ for c in (getattr(fn, "__closure__", None) or ())
                         if not isinstance(c.cell_contents, (int, float, str, bool, type(None), tuple, list, dict))]
                kinds["+".join(sorted(set(n for n in cells if "aunch" in n or "Kernel" in n))) or "?"] += 1
    print("LAUNCHERS", dict(kinds), "static_cuda_launcher",
          getattr(torch._inductor.config, "use_static_cuda_launcher", None))
