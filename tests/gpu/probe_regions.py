"""NVTX ranges and trlat.region on the GPU machine's real torch: a range
pushed with torch.cuda.nvtx and a trlat.region around aten launches, the
report's regions read back (run under libtrlat.so with
NVTX_INJECTION64_PATH pointing at it, as `trlat run` sets)."""
import json
import os
import sys

import torch
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import trlat  # noqa: E402

x = torch.ones(1024, device="cuda")
torch.cuda.nvtx.range_push("nvtx_fwd")
for _ in range(5):
    x = x + 1
torch.cuda.nvtx.range_pop()
with torch.cuda.nvtx.range("nvtx_ctx"):
    for _ in range(3):
        x = x * 2
with trlat.region("api_step"):
    for _ in range(4):
        x = x - 1
torch.cuda.synchronize()
path = trlat.flush()
print("REGIONS", sorted((g["name"], g["launches"]) for g in json.load(open(path)).get("regions", [])))
