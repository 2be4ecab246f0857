"""Helpers shared by the GPU tests and benchmarks: run a Python snippet or a
program under libtrlat.so in a subprocess, read its report, print PASS/FAIL
lines; pin benchmark children to the same CPUs; switch trlat's Python-side
wrappers off and on inside one process for an A/B."""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build"))
LIB = os.environ.get("TRLAT_LIB", os.path.join(BUILD, "libtrlat.so"))
BENCH = os.path.join(BUILD, "tests", "gpu", "bench_launch")
RESULTS = []


def check(name, ok, detail=""):
    RESULTS.append((name, bool(ok)))
    print(("PASS " if ok else "FAIL ") + name + (f": {detail}" if detail else ""), flush=True)
    return ok


def run(cmd, preload=True, env=None, report=True, timeout=600):
    """Runs cmd (list) and returns (stdout, stderr, returncode, report dict or None)."""
    e = dict(os.environ)
    e.pop("LD_PRELOAD", None)
    e.setdefault("TRLAT_SUMMARY", "0")
    e.update(env or {})
    out_path = None
    if preload:
        e["LD_PRELOAD"] = LIB
        fd, out_path = tempfile.mkstemp(prefix="trlat-gpu-", suffix=".json")
        os.close(fd)
        os.unlink(out_path)
        e["TRLAT_OUTPUT"] = out_path
    try:
        p = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as t:  # the child killed: what it printed, exit 124, as timeout(1) says
        text = lambda b: b.decode(errors="replace") if isinstance(b, bytes) else (b or "")  # noqa: E731
        p = subprocess.CompletedProcess(cmd, 124, text(t.stdout), text(t.stderr) + "\n(timed out after %ds)" % timeout)
    rep = None
    if preload and report and os.path.exists(out_path):
        with open(out_path) as f:
            rep = json.load(f)
        keep = os.environ.get("TRLAT_GPU_REPORTS")  # scripts/gpu-test.sh tars these into $OUT
        if keep:
            os.makedirs(keep, exist_ok=True)
            os.replace(out_path, os.path.join(keep, os.path.basename(out_path)))
        else:
            os.unlink(out_path)
    return p.stdout, p.stderr, p.returncode, rep


def py(code, **kw):
    return run([sys.executable, "-c", code], **kw)


def native(name):
    """A kernel not compiled by Triton: C++ (aten, cuBLAS, CUTLASS) names."""
    return any(t in name for t in ("(", "::", "<")) or name.startswith(("_Z", "void ", "sm80_", "sm90_", "cutlass"))


def kernel(rep, name):
    for k in rep["kernels"] if rep else []:
        if k["name"] == name:
            return k
    return None


def median(xs):
    return statistics.median(xs)


def summary():
    failed = [n for n, ok in RESULTS if not ok]
    print(f"{len(RESULTS) - len(failed)} passed, {len(failed)} failed", flush=True)
    return 1 if failed else 0


# ---- benchmarks ----
def bench_cpus():
    """The CPUs every measured child runs on (BENCH_CPUS="a,b", default the
    last two this process may use): the same for every variant, so that where
    the scheduler puts a child does not decide the comparison."""
    s = os.environ.get("BENCH_CPUS")
    if s:
        return {int(x) for x in s.split(",")}
    return set(sorted(os.sched_getaffinity(0))[-2:])


def pin():
    """preexec_fn for a measured child."""
    os.sched_setaffinity(0, bench_cpus())


def trlat_switch(required=("run", )):
    """hook(on) puts trlat's Python-side wrappers on (the run hook, the
    profile-mode kernel[grid] wrapper, the fast path's kernel[grid]
    launcher, the CudaLauncher's timer) or Triton's own methods back; the driver interposer stays in
    both arms (its ~0.1 us is issue 2's). For in-process A/B: the GPU
    machine's processes differ by far more than the few percent measured.
    Exits when a wrapper named in `required` is not installed."""
    from triton.runtime.jit import JITFunction, KernelInterface
    launcher = getattr(sys.modules.get("triton.backends.nvidia.driver"), "CudaLauncher", None)
    saved = []
    # CudaLauncher.__call__ too: its wrapper starts the clock of a launch no
    # outer wrapper timed, so that the "off" arm would be timed from there
    for cls, name in ((JITFunction, "run"), (JITFunction, "__getitem__"), (KernelInterface, "__getitem__"),
                      (launcher, "__call__")):
        w = cls.__dict__.get(name) if cls is not None else None
        if w is None:
            continue
        orig = getattr(w, "__wrapped__", None)  # trlat.Hook
        if orig is not None and callable(orig):
            saved.append((cls, name, w, orig))
        elif cls is not launcher and "trlat" in (getattr(w, "__doc__", None) or ""):
            saved.append((cls, name, w, None))  # the fast path's launcher: Triton's is inherited
    missing = set(required) - {name for _, name, _, _ in saved}
    if missing:
        raise SystemExit("trlat's wrapper of %s not found (is libtrlat.so preloaded?)" % ", ".join(sorted(missing)))

    def hook(on):
        for cls, name, w, orig in saved:
            if on:
                setattr(cls, name, w)
            elif orig is None:
                if name in cls.__dict__:
                    delattr(cls, name)
            else:
                setattr(cls, name, orig)
    return hook


def timed(loop):
    """run(k): k calls of loop, ns per call."""
    def run(k):
        t0 = time.perf_counter()
        for _ in range(k):
            loop()
        return (time.perf_counter() - t0) / k * 1e9
    return run


def ab_blocks(arms, pairs, block, sync, required=("run", )):
    """arms: {name: (on, run)}, on the state of trlat's wrappers for that arm
    (None: as they are), run(k) k calls and their ns per call. Alternating
    blocks of `block` calls, the order turned every pair; returns
    {name: [ns per call, one per block]}."""
    hook = trlat_switch(required)
    names = list(arms)
    out = {a: [] for a in names}
    for i in range(pairs):
        for a in names[i % len(names):] + names[:i % len(names)]:
            on, run = arms[a]
            if on is not None:
                hook(on)
            run(50)  # a switch bumps type versions: settle first
            sync()
            out[a].append(run(block))
            sync()
    hook(True)
    return out
