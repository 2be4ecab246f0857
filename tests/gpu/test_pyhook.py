"""GPU test of the Python hook with real Triton (3.6 on the GPU machine).

    python3 tests/gpu/test_pyhook.py            # prints PASS/FAIL lines, exit 1 on any FAIL

Runs workloads of this file in children under LD_PRELOAD=$BUILD/libtrlat.so
(TRLAT_LIB overrides; TRLAT_CUPTI=0) and checks their reports: the
tritonbench nop_with_args_kernel loop, an autotuned matmul, and one kernel
launched from two Python threads. Every "# SITE name" line below is a call
site the report must name as this file's file:line.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.abspath(__file__)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
LIB = os.environ.get("TRLAT_LIB", os.path.join(os.environ.get("BUILD", os.path.join(ROOT, "build")), "libtrlat.so"))
N_NOP = 5000
N_MM = 20
N_THR = 2000


def child(mode):
    import threading
    import torch
    global tl  # Triton resolves a kernel's annotations in its module's globals
    import triton
    import triton.language as tl

    @triton.jit
    def nop_with_args_kernel(t1, t2, t3, t4, t5, i1, i2, i3, i4, i5, i6, i7, i8, i9, c1: tl.constexpr,
                             c2: tl.constexpr, c3: tl.constexpr, c4: tl.constexpr, c5: tl.constexpr):
        pass

    tensors = [torch.zeros(1, device="cuda") for _ in range(5)]  # CUDA is up before the first kernel call
    ints = list(range(1, 10))
    if mode == "nop":
        for _ in range(N_NOP):
            nop_with_args_kernel[(1, )](*tensors, *ints, 1, 2, 3, 4, 5)  # SITE nop
        torch.cuda.synchronize()
    elif mode == "matmul":

        @triton.autotune(configs=[
            triton.Config({"BM": 32, "BN": 32, "BK": 32}, num_warps=4),
            triton.Config({"BM": 64, "BN": 64, "BK": 32}, num_warps=4),
        ], key=["M", "N", "K"])
        @triton.jit
        def matmul_kernel(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn, BM: tl.constexpr, BN: tl.constexpr,
                          BK: tl.constexpr):
            pm = tl.program_id(0)
            pn = tl.program_id(1)
            rm = pm * BM + tl.arange(0, BM)
            rn = pn * BN + tl.arange(0, BN)
            rk = tl.arange(0, BK)
            acc = tl.zeros((BM, BN), dtype=tl.float32)
            for k in range(0, K, BK):
                x = tl.load(a + rm[:, None] * sam + (k + rk)[None, :] * sak,
                            mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
                y = tl.load(b + (k + rk)[:, None] * sbk + rn[None, :] * sbn,
                            mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
                acc += tl.dot(x, y)
            tl.store(c + rm[:, None] * scm + rn[None, :] * scn, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))

        M = N = K = 256
        a = torch.randn(M, K, device="cuda")
        b = torch.randn(K, N, device="cuda")
        c = torch.empty(M, N, device="cuda")
        grid = lambda meta: (triton.cdiv(M, meta["BM"]), triton.cdiv(N, meta["BN"]))
        strides = (a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
        for _ in range(N_MM):
            matmul_kernel[grid](a, b, c, M, N, K, *strides)  # SITE matmul
        torch.cuda.synchronize()
        print("matmul_ok", bool(torch.allclose(c, a @ b, atol=1e-1, rtol=1e-2)))
    elif mode == "threads":
        nop_with_args_kernel[(1, )](*tensors, *ints, 1, 2, 3, 4, 5)  # SITE compile
        barrier = threading.Barrier(2)

        def first():
            barrier.wait()
            for _ in range(N_THR):
                nop_with_args_kernel[(1, )](*tensors, *ints, 1, 2, 3, 4, 5)  # SITE thread_a

        def second():
            barrier.wait()
            for _ in range(N_THR):
                nop_with_args_kernel[(1, )](*tensors, *ints, 1, 2, 3, 4, 5)  # SITE thread_b

        ts = [threading.Thread(target=first), threading.Thread(target=second)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        torch.cuda.synchronize()


def site_lines():
    out = {}
    with open(HERE) as f:
        for i, line in enumerate(f, 1):
            if "# SITE " in line and '"# SITE' not in line:
                out[line.split("# SITE ")[1].strip()] = "%s:%d" % (HERE, i)
    return out


failed = 0


def check(name, ok, detail):
    global failed
    failed += not ok
    print("%s %s: %s" % ("PASS" if ok else "FAIL", name, detail))


def run(mode, work, **env):
    path = os.path.join(work, mode + ".json")
    e = dict(os.environ, LD_PRELOAD=LIB, TRLAT_OUTPUT=path, TRLAT_CUPTI="0", TRLAT_SUMMARY="0", **env)
    p = subprocess.run([sys.executable, HERE, "--child", mode], env=e, capture_output=True, text=True, timeout=900)
    check(mode + ": child exit 0", p.returncode == 0, "rc=%d stderr=%r" % (p.returncode, p.stderr[-2000:]))
    if not os.path.exists(path):
        check(mode + ": report written", False, path)
        return None, p
    with open(path) as f:
        return json.load(f), p


def kernel(r, name):
    return next((k for k in r["kernels"] if k["name"] == name), None)


def sites_of(k):
    return {s["site"]: s["launches"] for s in k["call_sites"]}


def main():
    sites = site_lines()
    work = tempfile.mkdtemp(prefix="trlat-pyhook-")
    print("library:", LIB)

    r, _ = run("nop", work)
    if r:
        py = r["python"]
        check("nop: hook installed on Triton", py and py["hook"] == "installed", "python=%s" % py)
        k = kernel(r, "nop_with_args_kernel")
        check("nop: kernel reported", k is not None, "kernels=%s" % [x["name"] for x in r["kernels"]])
        if k:
            p = k["py_to_driver_ns"] or {}
            check("nop: every launch has py_to_driver", k["launches"] == N_NOP and p.get("count") == N_NOP,
                  "launches=%d py_count=%s" % (k["launches"], p.get("count")))
            check("nop: py_to_driver p50 plausible (1-200 us)", 1000 < p.get("p50", 0) < 200000,
                  "p50=%s ns, driver p50=%s ns" % (p.get("p50"), k["driver_ns"]["p50"]))
            q = k.get("py_return_ns") or {}
            check("nop: every call has py_return, below its py_to_driver", q.get("count") == N_NOP and
                  0 < q.get("p50", 0) < p.get("p50", 0), "count=%s p50=%s ns" % (q.get("count"), q.get("p50")))
            check("nop: call site is this file's loop line", sites_of(k) == {sites["nop"]: N_NOP},
                  "call_sites=%s" % k["call_sites"])

    r, p = run("matmul", work)
    if r:
        check("matmul: result unchanged under trlat", "matmul_ok True" in p.stdout, p.stdout.strip())
        k = kernel(r, "matmul_kernel")
        py = r["python"]
        check("matmul: kernel reported", k is not None, "kernels=%s" % [x["name"] for x in r["kernels"]])
        if k:
            p = k["py_to_driver_ns"] or {}
            check("matmul: one py_to_driver per autotuned call", p.get("count") == N_MM,
                  "py_count=%s launches=%d python=%s" % (p.get("count"), k["launches"], py))
            check("matmul: benchmark launches all at the call's line", sites_of(k) == {sites["matmul"]: k["launches"]},
                  "call_sites=%s" % k["call_sites"])
            check("matmul: autotuner outermost, JIT nested", py["calls"] == N_MM and py["nested_calls"] >= N_MM
                  and py["calls_multi_launch"] >= 1, "python=%s" % py)

    r, _ = run("threads", work)
    if r:
        k = kernel(r, "nop_with_args_kernel")
        if k:
            want = {sites["compile"]: 1, sites["thread_a"]: N_THR, sites["thread_b"]: N_THR}
            check("threads: each thread's line, exact counts", sites_of(k) == want, "call_sites=%s" % k["call_sites"])
            check("threads: py_to_driver for every launch", (k["py_to_driver_ns"] or {}).get("count") == 2 * N_THR + 1,
                  "py=%s" % (k["py_to_driver_ns"] or {}).get("count"))
            check("threads: two or more thread states", r["totals"]["threads"] >= 2, "threads=%d" % r["totals"]["threads"])
        else:
            check("threads: kernel reported", False, "")

    print("%d checks failed" % failed if failed else "all checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2])
    else:
        sys.exit(main())
