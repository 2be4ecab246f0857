# A probe: 0-argument nop hits on the stand-in Triton (tests/fastpath), torch imported,
# and the fake driver, ns per call (scripts/probes/callgrind_hits.sh).
import sys
import time

from standin import triton  # torch imported there

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
