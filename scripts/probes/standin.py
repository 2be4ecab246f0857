# The probes' stand-in world (scripts/probes/*_fake.py, hit_*.py): torch 2.11's
# CPU build with builtins for the device and stream reads, and the stand-in
# Triton of tests/fastpath, which launches through the fake libcuda.so.1.
import os
import sys

HERE = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fastpath"))
sys.path = [d for d in sys.path if os.path.abspath(d or ".") != HERE]  # the real torch, not the stand-in
import torch  # noqa: E402

torch._C._cuda_getDevice = int
torch.cuda.current_device = torch._C._cuda_getDevice
torch._C._cuda_getCurrentRawStream = abs
sys.path.insert(0, HERE)
import triton  # noqa: E402,F401
import triton.language as tl  # noqa: E402,F401
