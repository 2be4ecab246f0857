"""Helpers shared by the GPU tests: run a Python snippet or a program under
libtrlat.so in a subprocess, read its report, print PASS/FAIL lines."""
import json
import os
import statistics
import subprocess
import sys
import tempfile

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
    p = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=timeout)
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
