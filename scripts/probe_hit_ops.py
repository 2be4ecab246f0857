#!/usr/bin/env python3
"""What the fast path's hit pays per call into torch, on this machine.

Times the calls a hit makes to read a call's device, stream and tensors:
from Python (ns per call, best of 7 timeit repeats, beside an empty body
for scale) and from C (probe_hit_ops.c, built here with gcc against this
Python's headers: TSC ticks and ns per call). A diagnostic for the phase
timer's `device` and `key` rows; needs torch with CUDA.
  python3 scripts/probe_hit_ops.py
"""
import os
import subprocess
import sys
import sysconfig
import tempfile
import timeit

import torch

t = torch.zeros(16, device="cuda")
dev = torch.cuda.current_device()
g = {"t": t, "torch": torch, "dev": dev, "f": (lambda: None), "tc": torch._C,
     "gd": torch._C._cuda_getDevice, "gs": torch._C._cuda_getCurrentRawStream,
     "dp": torch.Tensor.data_ptr}
CASES = [
    ("empty loop body (pass)", "pass"),
    ("lambda: None call", "f()"),
    ("t.dtype", "t.dtype"),
    ("t.is_cuda", "t.is_cuda"),
    ("t.data_ptr()", "t.data_ptr()"),
    ("Tensor.data_ptr(t)", "dp(t)"),
    ("t.device", "t.device"),
    ("torch._C._cuda_getDevice()", "gd()"),
    ("torch._C._cuda_getCurrentRawStream(dev)", "gs(dev)"),
    ("torch.cuda.current_device()", "torch.cuda.current_device()"),
]
N = 200000
base = None
for label, stmt in CASES:
    best = min(timeit.repeat(stmt, globals=g, number=N, repeat=7)) / N * 1e9
    if base is None:
        base = best
    print("TABLE probe %-42s %7.1f ns  (%.1f beyond the empty body)" % (label, best, best - base))

# the same reads from C
here = os.path.dirname(os.path.abspath(__file__))
tmp = tempfile.mkdtemp(prefix="trlat-probe-")
so = os.path.join(tmp, "opcost" + sysconfig.get_config_var("EXT_SUFFIX"))
subprocess.check_call(["gcc", "-O2", "-shared", "-fPIC", "-I", sysconfig.get_paths()["include"],
                       os.path.join(here, "probe_hit_ops.c"), "-o", so, "-ldl"])
sys.path.insert(0, tmp)
import opcost  # noqa: E402

torch.cuda.set_stream(torch.cuda.Stream())  # a non-default stream, as the benchmarks use
r = opcost.run(t, torch._C._cuda_getDevice, torch._C._cuda_getCurrentRawStream, 200000)
tpn = r.pop("ticks per ns")
for k, v in r.items():
    if isinstance(v, float):
        print("TABLE probe C %-46s %7.1f ticks %7.1f ns" % (k, v, v / tpn))
    else:
        print("TABLE probe C %-46s %s" % (k, v))
