"""GPU test of regions and the py->driver phase split on the GPU machine's
real torch and Triton (3.6).

    python3 tests/gpu/test_regions.py   # PASS/FAIL lines, exit 1 on any FAIL

Regions: ranges pushed with torch.cuda.nvtx (through NVTX's tool-injection
interface: `trlat run` points NVTX_INJECTION64_PATH at libtrlat.so, as a
child here does by hand) and trlat.region, each around a known number of
aten launches, read back from the report. Phases: TRLAT_PY_PHASES=1 on
tritonbench's nop_with_args_kernel loop: Triton 3.6's compute_cache_key,
CompiledKernel.launch_metadata and CudaLauncher.__call__ must all be
marked, so that every call is split, and the parts must add up to the
report's py->driver.
"""
import json
import os
import subprocess
import sys

from common import BUILD, LIB, check, py, summary

PYDIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "python")
N_NOP = 3000

REGIONS = r"""
import sys, torch
sys.path.insert(0, %r)
import trlat
x = torch.ones(1024, device="cuda")
torch.cuda.synchronize()
torch.cuda.nvtx.range_push("nvtx_fwd")
for _ in range(5):
    x = x + 1
torch.cuda.nvtx.range_pop()
with torch.cuda.nvtx.range("nvtx_ctx"):
    for _ in range(3):
        x = x * 2
        with trlat.region("api_inner"):
            x = x - 1
with trlat.region("api_step"):
    for _ in range(4):
        x = x - 1
torch.cuda.synchronize()
print(float(x[0]))
""" % PYDIR

# tritonbench's nop_with_args_kernel loop, from bench_pyhook.py (Triton's
# @jit reads its function's source: a file, not python -c)
PHASES = r"""
import sys, torch
sys.path.insert(0, %r)
from bench_pyhook import nop_with_args
launch, loop = nop_with_args()
launch()
loop(%d)
torch.cuda.synchronize()
""" % (os.path.dirname(os.path.abspath(__file__)), N_NOP - 1)


def regions(rep):
    return {g["name"]: g for g in (rep or {}).get("regions", [])}


def main():
    env = {"TRLAT_CUPTI": "0", "NVTX_INJECTION64_PATH": LIB}
    out, err, rc, rep = py(REGIONS, env=env)
    g = regions(rep)
    got = {n: g[n]["launches"] for n in g}
    check("nvtx and trlat.region: the program ran as without trlat", rc == 0 and out.strip(), err[-500:])
    check("torch.cuda.nvtx.range_push/pop: 5 launches in nvtx_fwd", got.get("nvtx_fwd") == 5, str(got))
    check("torch.cuda.nvtx.range nested with trlat.region: 3 in nvtx_ctx, 3 in api_inner",
          got.get("nvtx_ctx") == 3 and got.get("api_inner") == 3, str(got))
    check("trlat.region: 4 launches in api_step", got.get("api_step") == 4, str(got))
    check("regions carry driver time", all(g[n]["driver_ns"] > 0 for n in g) and g, str(got))
    out0, _, _, rep0 = py(REGIONS, env={"TRLAT_CUPTI": "0"})
    got0 = {n: v["launches"] for n, v in regions(rep0).items()}
    check("without the injection variable only trlat.region's regions", set(got0) == {"api_inner", "api_step"} and
          out0 == out, str(got0))

    # trlat run sets the variable itself
    cli = os.path.join(BUILD, "trlat")
    rpt = os.path.join(os.environ.get("TMPDIR", "/tmp"), "trlat-gpu-regions-run.json")
    e = dict(os.environ, TRLAT_CUPTI="0", TRLAT_SUMMARY="0", TRLAT_OUTPUT=rpt)
    e.pop("LD_PRELOAD", None)
    e.pop("NVTX_INJECTION64_PATH", None)
    p = subprocess.run([cli, "run", "--", sys.executable, "-c", REGIONS], env=e, capture_output=True, text=True,
                       timeout=300)
    got_run = {}
    if p.returncode == 0 and os.path.exists(rpt):
        got_run = {n: v["launches"] for n, v in regions(json.load(open(rpt))).items()}
    check("trlat run: NVTX ranges are regions with no variable set by hand", got_run == got, "%s %s" %
          (got_run, p.stderr[-300:]))

    out, err, rc, rep = py(PHASES, env={"TRLAT_CUPTI": "0", "TRLAT_PY_PHASES": "1"})
    k = next((x for x in (rep or {}).get("kernels", []) if x["name"] == "nop_with_args_kernel"), None)
    ph = (k or {}).get("py_phases_ns")
    check("TRLAT_PY_PHASES=1: the loop ran, nothing on stderr", rc == 0 and not err.strip(), err[-500:])
    # a call whose record was folded while it was open is not split (pyphase.c)
    if not check("phases: the calls to the launcher split (99% or more)", ph and ph["calls"] >= 0.99 * N_NOP,
                 str(ph)):
        return
    check("phases: every call passed Triton 3.6's compute_cache_key and launch_metadata",
          ph["split_calls"] == ph["calls"], str(ph))
    pd = k["py_to_driver_ns"]["sum"]
    check("phases: before the launcher + the launcher's own = py->driver (within 0.1%)",
          abs(ph["before_launcher"] + ph["launcher"] - pd) <= pd / 1000, "%s vs %d" % (ph, pd))
    check("phases: bind + cache and grid + metadata = before the launcher (within 0.1%)",
          abs(ph["bind"] + ph["cache_grid"] + ph["launch_metadata"] - ph["before_launcher"]) <=
          ph["before_launcher"] / 1000, str(ph))
    n = ph["calls"]  # means over every split call, the first (compiling) one included
    print("TABLE phases_ns_per_call bind %.0f cache_grid %.0f launch_metadata %.0f launcher %.0f py_to_driver %.0f" %
          (ph["bind"] / n, ph["cache_grid"] / n, ph["launch_metadata"] / n, ph["launcher"] / n, pd / n))


if __name__ == "__main__":
    main()
    sys.exit(summary())
