# The hit probes' timing (hit_compiled.py, hit_libentry.py): call() 100
# times to warm up, then n times; ns per call.
import time


def ns_per_call(call, n):
    for _ in range(100):
        call()
    a = time.perf_counter_ns()
    for _ in range(n):
        call()
    return (time.perf_counter_ns() - a) / n
