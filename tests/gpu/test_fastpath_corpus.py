"""The fast path's correctness corpus (issue 5), for the GPU machine.

Each workload runs in its own process three times: TRLAT_FASTPATH=0, =1 and
=verify (CORPUS_JOBS processes at a time, default 6: what is compared does
not depend on timing; the autotuner's do_bench is deterministic), each with
TRLAT_FASTPATH_LOG (one line per launch: kernel, grid,
block, shared memory, stream, attributes, parameter bytes). PASS when, for
every workload, the output tensors are bitwise identical (sha256), the
launch sequences are identical (exactly, or with pointers and streams
renamed by first appearance when the allocator placed them differently:
said so in the line), the fast path hit, and verify mode found no mismatch.

  python3 tests/gpu/test_fastpath_corpus.py [WORKLOAD...]
  python3 tests/gpu/test_fastpath_corpus.py --run WORKLOAD   (one process)
"""
import hashlib
import itertools
import json
import os
import re
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

WORKLOADS = ["vadd", "softmax", "layernorm", "matmul_autotuned", "dropout", "scalars", "ints", "annotated_ints", "misaligned",
             "dtypes", "two_streams", "cuda_graph", "two_threads", "run_direct"]
REPS = int(os.environ.get("CORPUS_REPS", "5"))
JOBS = max(1, int(os.environ.get("CORPUS_JOBS", "6")))
MODES = ("0", "1", "verify")


# ---------------------------------------------------------------- workloads
def workloads():
    import torch
    import triton
    import triton.language as tl

    out = {}

    def digest(name, *ts):
        torch.cuda.synchronize()
        h = hashlib.sha256()
        for t in ts:
            b = t.detach().contiguous().cpu().view(torch.uint8)
            try:
                h.update(b.numpy().tobytes())
            except Exception:  # noqa: BLE001 (no numpy)
                h.update(bytes(b.tolist()))
        out[name] = h.hexdigest()

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)

    def vadd():
        torch.manual_seed(0)
        x, y = torch.randn(200003, device="cuda"), torch.randn(200003, device="cuda")
        for r in range(REPS):
            for n in (1, 2, 15, 16, 17, 1000, 4096, 100003, 200003):
                o = torch.zeros(200003, device="cuda")
                add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]), )](x, y, o, n, BLOCK=1024)
                o2 = torch.zeros(200003, device="cuda")
                add_kernel[(triton.cdiv(n, 256), )](x, y, o2, n, BLOCK=256)
                digest(f"vadd r{r} n{n}", o, o2)

    @triton.jit
    def softmax_kernel(out_ptr, in_ptr, in_stride, out_stride, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        offs = tl.arange(0, BLOCK)
        x = tl.load(in_ptr + row * in_stride + offs, mask=offs < n_cols, other=-float("inf"))
        x = x - tl.max(x, axis=0)
        num = tl.exp(x)
        tl.store(out_ptr + row * out_stride + offs, num / tl.sum(num, axis=0), mask=offs < n_cols)

    def softmax():
        torch.manual_seed(1)
        for r in range(REPS):
            for rows, cols in ((1, 7), (64, 128), (100, 1000), (33, 781)):
                x = torch.randn(rows, cols, device="cuda")
                y = torch.empty_like(x)
                softmax_kernel[(rows, )](y, x, x.stride(0), y.stride(0), cols,
                                         BLOCK=triton.next_power_of_2(cols))
                digest(f"softmax r{r} {rows}x{cols}", y)

    @triton.jit
    def layernorm_kernel(X, Y, W, B, stride, N, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        m = cols < N
        x = tl.load(X + row * stride + cols, mask=m, other=0.).to(tl.float32)
        mean = tl.sum(x, axis=0) / N
        xc = tl.where(m, x - mean, 0.)
        var = tl.sum(xc * xc, axis=0) / N
        rstd = 1 / tl.sqrt(var + eps)
        w = tl.load(W + cols, mask=m)
        b = tl.load(B + cols, mask=m)
        tl.store(Y + row * stride + cols, xc * rstd * w + b, mask=m)

    def layernorm():
        torch.manual_seed(2)
        for r in range(REPS):
            for M, N in ((8, 64), (128, 512), (77, 1000)):
                x = torch.randn(M, N, device="cuda")
                w, b = torch.randn(N, device="cuda"), torch.randn(N, device="cuda")
                y = torch.empty_like(x)
                layernorm_kernel[(M, )](x, y, w, b, x.stride(0), N, 1e-5, BLOCK=triton.next_power_of_2(N))
                digest(f"layernorm r{r} {M}x{N}", y)

    counter = itertools.count()

    def det_bench(kernel_call, quantiles):  # deterministic tuning: the first config wins
        kernel_call()
        t = float(next(counter))
        return [t, t, t]

    @triton.autotune(configs=[
        triton.Config({"BM": 32, "BN": 32, "BK": 32}, num_warps=4, num_stages=2),
        triton.Config({"BM": 64, "BN": 32, "BK": 32}, num_warps=4, num_stages=3),
    ], key=["M", "N", "K"], do_bench=det_bench)
    @triton.jit
    def matmul_kernel(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn, BM: tl.constexpr, BN: tl.constexpr,
                      BK: tl.constexpr):
        pm, pn = tl.program_id(0), tl.program_id(1)
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            av = tl.load(a + rm[:, None] * sam + (k + rk)[None, :] * sak,
                         mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.)
            bv = tl.load(b + (k + rk)[:, None] * sbk + rn[None, :] * sbn,
                         mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.)
            acc += tl.dot(av, bv)
        tl.store(c + rm[:, None] * scm + rn[None, :] * scn, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))

    def matmul_autotuned():
        torch.manual_seed(3)
        for r in range(REPS):
            for M, N, K in ((64, 64, 64), (100, 70, 33), (128, 256, 64)):
                a = torch.randn(M, K, device="cuda", dtype=torch.float16)
                b = torch.randn(K, N, device="cuda", dtype=torch.float16)
                c = torch.empty(M, N, device="cuda", dtype=torch.float32)
                grid = lambda meta: (triton.cdiv(M, meta["BM"]), triton.cdiv(N, meta["BN"]))  # noqa: E731
                matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                    c.stride(0), c.stride(1))
                digest(f"matmul r{r} {M}x{N}x{K}", c)

    @triton.jit
    def dropout_kernel(x_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        x = tl.load(x_ptr + offs, mask=m)
        keep = tl.rand(seed, offs) > p
        tl.store(out_ptr + offs, tl.where(keep, x / (1 - p), 0.0), mask=m)

    def dropout():
        torch.manual_seed(4)
        x = torch.randn(10000, device="cuda")
        for r in range(REPS):
            for seed in (0, 1, 2, 16, 17, 123456, 2**30 + 3):
                o = torch.empty_like(x)
                dropout_kernel[(triton.cdiv(10000, 1024), )](x, o, 10000, 0.25 + 0.1 * (seed % 3), seed, BLOCK=1024)
                digest(f"dropout r{r} seed{seed}", o)

    @triton.jit
    def scalars_kernel(x_ptr, out_ptr, alpha, flag, maybe, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        m = offs < n
        v = tl.load(x_ptr + offs, mask=m) * alpha
        if flag:
            v = v + 1.0
        if maybe is not None:
            v = v + tl.load(maybe + offs, mask=m)
        tl.store(out_ptr + offs, v, mask=m)

    def scalars():
        torch.manual_seed(5)
        x, z = torch.randn(256, device="cuda"), torch.randn(256, device="cuda")
        for r in range(REPS):
            for alpha, flag, maybe in ((1.5, True, None), (-0.0, False, z), (3e38, True, z), (0.1, False, None)):
                o = torch.empty_like(x)
                scalars_kernel[(1, )](x, o, alpha, flag, maybe, 256 - r, BLOCK=256)
                digest(f"scalars r{r} {alpha} {flag} {maybe is None}", o)

    @triton.jit
    def int_kernel(out_ptr, a, b):
        tl.store(out_ptr, a)  # stored as the pointer's int64 (a may be the constexpr 1)
        tl.store(out_ptr + 1, b)

    def ints():
        vals = (0, 1, 2, 15, 16, 17, 32, -1, -16, 2**31 - 1, 2**31, 2**31 + 16, -2**31, -2**31 - 1, 2**40 + 16,
                2**63 - 1)
        for r in range(REPS):
            for v in vals:
                o = torch.zeros(2, dtype=torch.int64, device="cuda")
                int_kernel[(1, )](o, v, v + 1 if v < 2**63 - 1 else v)
                digest(f"ints r{r} {v}", o)

    @triton.jit
    def annint_kernel(out_ptr, a: int, b: "i64", c: int):  # FlagGems' `stride: int` parameters
        tl.store(out_ptr, a)
        tl.store(out_ptr + 1, b)
        tl.store(out_ptr + 2, c)

    def annotated_ints():
        # keyed by Triton's class of them (1, div 16, neither), the values
        # written; past i32 for `a`, the launcher raises (keyed exactly)
        vals = (0, 1, 2, 15, 16, 17, 32, -1, -16, 2**31 - 1, -2**31, 2**31)
        for r in range(REPS):
            for v in vals:
                o = torch.zeros(3, dtype=torch.int64, device="cuda")
                try:
                    annint_kernel[(1, )](o, v, v * 3 + 2**33, 100 + v % 7 + r)
                except Exception as e:  # noqa: BLE001 (OverflowError: the same in every mode)
                    digest(f"annotated_ints r{r} {v} raised {type(e).__name__}", o)
                    continue
                digest(f"annotated_ints r{r} {v}", o)

    def misaligned():
        torch.manual_seed(6)
        x, y = torch.randn(4100, device="cuda"), torch.randn(4100, device="cuda")
        for r in range(REPS):
            for off in (0, 1, 2, 3, 4, 8):
                o = torch.zeros(4096, device="cuda")
                add_kernel[(4, )](x[off:off + 4096], y[4 - off % 4:], o, 4096, BLOCK=1024)
                digest(f"misaligned r{r} {off}", o)

    def dtypes():
        torch.manual_seed(7)
        for r in range(REPS):
            for dt in (torch.float32, torch.float16, torch.bfloat16, torch.float32):
                x = torch.randn(3000, device="cuda").to(dt)
                o = torch.empty_like(x)
                add_kernel[(3, )](x, x, o, 3000, BLOCK=1024)
                digest(f"dtypes r{r} {dt}", o)

    def two_streams():
        torch.manual_seed(8)
        s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
        x = torch.randn(100000, device="cuda")
        torch.cuda.synchronize()
        for r in range(REPS):
            o1, o2 = torch.empty_like(x), torch.empty_like(x)
            with torch.cuda.stream(s1):
                add_kernel[(98, )](x, x, o1, 100000, BLOCK=1024)
            with torch.cuda.stream(s2):
                add_kernel[(98, )](x, o1 if r % 2 else x, o2, 100000 - r, BLOCK=1024)
            torch.cuda.synchronize()
            digest(f"streams r{r}", o1, o2)

    def cuda_graph():
        torch.manual_seed(9)
        x = torch.randn(50000, device="cuda")
        o = torch.empty_like(x)
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):  # warm up (compile) outside the capture
            for n in (50000, 40000):
                add_kernel[(49, )](x, x, o, n, BLOCK=1024)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for n in (50000, 40000, 50000):
                add_kernel[(49, )](x, o, o, n, BLOCK=1024)
        for r in range(REPS):
            o.zero_()
            g.replay()
            digest(f"graph r{r}", o)

    def two_threads():
        torch.manual_seed(10)
        xs = [torch.randn(65536, device="cuda") for _ in range(2)]
        outs = [torch.zeros(65536, device="cuda") for _ in range(2)]
        torch.cuda.synchronize()

        def work(i):
            for r in range(REPS * 10):
                add_kernel[(64, )](xs[i], outs[i], outs[i], 65536 - (r % 3), BLOCK=1024)

        ts = [threading.Thread(target=work, args=(i, )) for i in range(2)]
        [t.start() for t in ts]
        [t.join() for t in ts]
        digest("threads", *outs)

    def run_direct():
        torch.manual_seed(11)
        x = torch.randn(5000, device="cuda")
        for r in range(REPS):
            o = torch.empty_like(x)
            add_kernel.run(x, x, o, 5000 - r, grid=(5, ), warmup=False, BLOCK=1024)
            digest(f"run r{r}", o)

    return {name: fn for name, fn in locals().items() if name in WORKLOADS}, out


def run_one(name):
    fns, out = workloads()
    fns[name]()
    print("DIGESTS " + json.dumps(out), flush=True)


# ---------------------------------------------------------------- driver
PTR = re.compile(r"\b[0-9a-f]{16}\b")


def normalize(lines):
    """Pointers (8-byte parameters above 4 GiB) and streams renamed by first appearance."""
    names = {}

    def ptr(m):
        v = int.from_bytes(bytes.fromhex(m.group(0)), "little")
        if v < 1 << 32:
            return m.group(0)
        return names.setdefault(("p", v), "P%d" % len(names))

    out = []
    for line in lines:
        line = re.sub(r"stream=(\S+)", lambda m: "stream=" + names.setdefault(("s", m.group(1)), "S%d" % len(names)),
                      line)
        head, _, params = line.partition(" params=")
        out.append(head + " params=" + PTR.sub(ptr, params))
    return out


# Workloads with enough tensor arguments (16 reads through torch's getters)
# for the fast path to switch to reading torch's structs.
FIELDS_EXPECTED = ("vadd", "ints", "misaligned")


def run_mode(job):
    """One workload in one mode, in its own process: (rc, digests, launch log lines, report, stderr)."""
    import common
    name, mode = job
    fd, log = tempfile.mkstemp(prefix="fplog-", suffix=".txt")
    os.close(fd)
    out, err, rc, rep = common.run([sys.executable, os.path.abspath(__file__), "--run", name],
                                   env={"TRLAT_FASTPATH": mode, "TRLAT_FASTPATH_LOG": log, "TRLAT_CUPTI": "0",
                                        "TRLAT_FASTPATH_DEBUG": "1" if mode == "1" else "0"})
    with open(log) as f:
        lines = f.read().splitlines()
    os.unlink(log)
    m = re.search(r"^DIGESTS (.*)$", out, re.M)
    return rc, json.loads(m.group(1)) if m else None, lines, rep, err


def main():
    from concurrent.futures import ThreadPoolExecutor
    from common import check, summary
    names = [a for a in sys.argv[1:] if not a.startswith("-")] or WORKLOADS
    jobs = [(name, mode) for name in names for mode in MODES]
    with ThreadPoolExecutor(max_workers=JOBS) as ex:
        results = dict(zip(jobs, ex.map(run_mode, jobs)))
    for name in names:
        res = {mode: results[(name, mode)] for mode in MODES}
        rc0, d0, l0, r0, e0 = res["0"]
        if not check(f"{name}: runs with the fast path off", rc0 == 0 and d0, e0[-400:]):
            continue
        for mode in ("1", "verify"):
            rc, d, lines, rep, err = res[mode]
            check(f"{name} [{mode}]: exit code and outputs bitwise identical", rc == 0 and d == d0,
                  err[-400:] if rc else "")
            la, lb = l0, lines
            if name == "two_threads":  # the two threads' launches interleave differently
                la, lb = sorted(la), sorted(lb)
            if la == lb:
                check(f"{name} [{mode}]: launch sequence identical ({len(lb)} launches)", True)
            else:
                na, nb = normalize(l0), normalize(lines)
                if name == "two_threads":
                    na, nb = sorted(na), sorted(nb)
                diff = next((f"#{i}: {a} | {b}" for i, (a, b) in enumerate(zip(na, nb)) if a != b),
                            f"{len(na)} vs {len(nb)} launches")
                check(f"{name} [{mode}]: launch sequence identical up to pointer/stream renaming "
                      f"({len(lb)} launches)", na == nb, diff[:600])
            fp = [k["fastpath"] for k in (rep or {}).get("kernels", []) if k.get("fastpath")]
            hits = sum(f["hits"] for f in fp)
            misses = sum(f["misses"] for f in fp)
            falls = {}
            for f in fp:
                for k, v in f["fallbacks"].items():
                    falls[k] = falls.get(k, 0) + v
            print(f"TABLE fastpath-corpus {name} [{mode}] hits={hits} misses={misses} fallbacks={falls}", flush=True)
            check(f"{name} [{mode}]: the fast path hit", hits > 0, f"hits={hits} misses={misses} {falls}")
            if mode == "1" and name in FIELDS_EXPECTED:  # many tensor reads: the struct reader switched on
                check(f"{name} [1]: tensors read from torch's structs (tensor_direct.c)",
                      "read from torch's TensorImpl" in err, err[-400:])
            check(f"{name} [{mode}]: torch's structs never disagreed with its getters",
                  "through torch's getters from now on" not in err, err[-400:])
            if mode == "verify":
                check(f"{name} [verify]: zero mismatches", falls.get("verify_mismatch", 0) == 0 and
                      "verify" not in err, err[-400:])
    return summary()


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--run":
        run_one(sys.argv[2])
    else:
        sys.exit(main())
