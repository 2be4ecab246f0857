"""Real jobs past trlat's small tables: a PyTorch script whose eager ops
launch hundreds of distinct kernels, and a torch.compile'd training step
beside them, exit normally under trlat with their report; a job stopped by
SIGTERM still leaves its report and dies by that signal."""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import LIB, check, run, summary  # noqa: E402

JOB = r'''
import sys, torch
torch.manual_seed(0)
dev = "cuda"
dtypes = [torch.float32, torch.float16, torch.bfloat16, torch.float64,
          torch.int32, torch.int64, torch.int8, torch.uint8]
ops = [torch.add, torch.mul, torch.sub, torch.maximum, torch.minimum, torch.eq, torch.lt]
unary = [torch.neg, torch.abs, lambda x: x.sum(0), lambda x: x.amax(1), lambda x: x.cumsum(0),
         lambda x: x.flip(0), lambda x: x.t().contiguous(), lambda x: torch.sort(x, 1).values,
         lambda x: x.clamp(0, 3), lambda x: torch.where(x > 1, x, x * 2)]
floats = [torch.exp, torch.log1p, torch.sigmoid, torch.tanh, torch.sqrt, lambda x: x.softmax(1),
          lambda x: x.mean(0), lambda x: x @ x.t(), lambda x: torch.nn.functional.gelu(x),
          lambda x: torch.nn.functional.layer_norm(x, x.shape[1:])]
check = 0.0
for dt in dtypes:
    base = (torch.rand(64, 48, device=dev) * 4).to(dt)
    for layout in (base, base.t(), base[::2]):
        x = layout
        calls = [lambda op=op: op(x, x) for op in ops] + [lambda op=op: op(x) for op in unary]
        if dt.is_floating_point and dt != torch.float64:
            calls += [lambda op=op: op(x.float()) for op in floats]
        for call in calls:
            try:  # a few op and dtype pairs have no kernel: skipped the same way with and without trlat
                check += float(call().double().sum())
            except (RuntimeError, TypeError):
                pass
print("eager", round(check, 3))

class Block(torch.nn.Module):
    def __init__(s, d):
        super().__init__()
        s.ln = torch.nn.LayerNorm(d)
        s.a = torch.nn.Linear(d, 4 * d)
        s.b = torch.nn.Linear(4 * d, d)
    def forward(s, x):
        return x + s.b(torch.nn.functional.gelu(s.a(s.ln(x))))

model = torch.nn.Sequential(*[Block(64) for _ in range(4)]).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
step = torch.compile(lambda x: (model(x).softmax(-1) * x).pow(2).mean(), dynamic=False)
for shape in [(8, 64), (16, 64), (24, 64)]:
    for i in range(3):
        x = torch.randn(*shape, device=dev)
        loss = step(x)
        loss.backward()
        opt.step(); opt.zero_grad()
print("compiled", round(float(loss), 6))
if len(sys.argv) > 1:  # wait to be stopped, launching
    print("ready", flush=True)
    x = torch.randn(64, 64, device=dev)
    while True:
        x = torch.tanh(x)
        torch.cuda.synchronize()
'''

with tempfile.TemporaryDirectory() as d:
    job = os.path.join(d, "job.py")
    with open(job, "w") as f:
        f.write(JOB)
    env = {"TORCHINDUCTOR_CACHE_DIR": os.path.join(d, "inductor"), "TRITON_CACHE_DIR": os.path.join(d, "triton")}
    plain, perr, prc, _ = run([sys.executable, job], preload=False, env=env, timeout=540)
    check("job runs without trlat", prc == 0, perr[-400:])
    start = time.monotonic()
    out, err, rc, rep = run([sys.executable, job], env=env, timeout=540)
    took = time.monotonic() - start
    check("job under trlat exits normally", rc == 0, f"exit {rc} after {took:.0f} s; {err[-400:]}")
    check("job output unchanged under trlat", out == plain, f"{plain.strip()} | {out.strip()}")
    check("job's report written", rep is not None)
    if rep:
        kernels = rep["totals"]["kernels"]
        triton = [k for k in rep["kernels"] if k["name"].startswith("triton_")]
        print(f"TABLE scale_job kernels {kernels} triton_kernels {len(triton)} launches {rep['totals']['launches']}")
        check("the job launched more than 256 distinct kernels", kernels > 256, f"{kernels}")
        check("Inductor's kernels are in the report", len(triton) > 0, f"{len(triton)}")
        check("launches by kernel add up", sum(k["launches"] for k in rep["kernels"]) == rep["totals"]["launches"])

    # SIGTERM while launching: the report is written and the exit status kept
    rpath = os.path.join(d, "term.json")
    e = dict(os.environ, LD_PRELOAD=LIB, TRLAT_OUTPUT=rpath, TRLAT_SUMMARY="0", **env)
    p = subprocess.Popen([sys.executable, job, "wait"], env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    ready = False
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        line = p.stdout.readline()
        if not line:
            break
        if line.startswith("ready"):
            ready = True
            break
    time.sleep(1.0)
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    check("SIGTERM job reached its loop", ready)
    check("SIGTERM job died by SIGTERM", p.returncode == -signal.SIGTERM, f"returncode {p.returncode}")
    ok = os.path.exists(rpath)
    detail = ""
    if ok:
        with open(rpath) as f:
            r = json.load(f)
        detail = f"{r['totals']['kernels']} kernels, {r['totals']['launches']} launches"
        ok = r["totals"]["kernels"] > 256
        keep = os.environ.get("TRLAT_GPU_REPORTS")
        if keep:
            os.makedirs(keep, exist_ok=True)
            shutil.copy(rpath, os.path.join(keep, "scale-job-sigterm.json"))
    check("SIGTERM job left its report with every kernel", ok, detail)

sys.exit(summary())
