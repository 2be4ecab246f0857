# A probe: 0-argument nop hits on the stand-in Triton (tests/fastpath), torch imported,
# and the fake driver, ns per call (scripts/probes/callgrind_hits.sh).
import os, sys, time
HERE = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fastpath"))
sys.path = [d for d in sys.path if os.path.abspath(d or ".") != HERE]
import torch
torch._C._cuda_getDevice = int
torch.cuda.current_device = torch._C._cuda_getDevice
torch._C._cuda_getCurrentRawStream = abs
sys.path.insert(0, HERE)
import triton
import triton.language as tl

@triton.jit
def nop_kernel():
    pass

def main(n):
    for _ in range(100):
        nop_kernel[(1,)]()
    a = time.perf_counter_ns()
    for _ in range(n):
        nop_kernel[(1,)]()
    b = time.perf_counter_ns()
    print("ns/call", (b - a) / n)
main(int(sys.argv[1]))
