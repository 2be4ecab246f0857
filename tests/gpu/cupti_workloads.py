"""Workloads for tests/gpu/test_cupti.py, each run in its own process under
libtrlat.so:  cupti_workloads.py MODE
  mix          Triton add_kernel and torch ops (elementwise, reduction, matmul), 200 rounds
  tiny         a 1-element Triton kernel, 5000 launches in a loop
  large        a Triton kernel of a few ms, 100 launches queued back to back
  dobench      triton.testing.do_bench of a ~0.5 ms add_kernel; prints dobench_ms=X
  profiler     torch.profiler around torch ops and Triton launches; prints profiler_kernels=N
  idle         CUDA initialised, nothing launched
  exit_thread  a thread launches, then calls C exit() (the main thread waits in join)
  fork         fork after CUDA work; the child exits without CUDA, the parent goes on
Prints a few `key=value` lines the test reads."""
import ctypes
import os
import sys
import threading
import time

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def tiny_kernel(x_ptr):
    tl.store(x_ptr, tl.load(x_ptr) + 1.0)


@triton.jit(do_not_specialize=["n_iter"])  # one compile for every n_iter
def spin_kernel(x_ptr, n_iter, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs)
    for _ in range(n_iter):
        v = v * 0.999999 + 0.5
    tl.store(x_ptr + offs, v)


def add(x, y, out):
    n = x.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)


def mix():
    torch.manual_seed(0)
    x = torch.randn(1 << 20, device="cuda")
    y = torch.randn(1 << 20, device="cuda")
    out = torch.empty_like(x)
    a = torch.randn(512, 512, device="cuda")
    b = torch.randn(512, 512, device="cuda")
    acc = torch.zeros((), device="cuda")
    for _ in range(200):
        add(x, y, out)           # Triton: through trlat's driver wrapper (dlsym)
        z = torch.relu(out)      # torch: the CUDA runtime's launches (its driver calls through cuGetProcAddress)
        acc += (z * 0.5).sum()
        c = a @ b
    torch.cuda.synchronize()
    print(f"checksum={acc.item() + c.sum().item():.3f}")


def tiny():
    x = torch.zeros(1, device="cuda")
    for _ in range(100):
        tiny_kernel[(1,)](x)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(5000):
        tiny_kernel[(1,)](x)
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    print(f"us_per_launch={(t1 - t0) / 5000 * 1e6:.2f}")


def spin(x, n_iter):
    spin_kernel[(x.numel() // 256,)](x, n_iter, BLOCK=256)


def large():
    x = torch.ones(132 * 8 * 256, device="cuda")
    spin_kernel.warmup(x, 1000, BLOCK=256, grid=(x.numel() // 256,))  # compile, no launch
    # Size it to ~3 ms. Each timed launch follows a torch op, so the GPU
    # idled only for one launch call before it (the compile is over).
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
    n_iter = 20000
    for _ in range(3):
        x.mul_(1.0)
        ev[0].record()
        spin(x, n_iter)
        ev[1].record()
        torch.cuda.synchronize()
        ms = ev[0].elapsed_time(ev[1])
        n_iter = max(1000, int(n_iter * 3.0 / max(ms, 1e-3)))
    x.mul_(1.0)
    for _ in range(100):
        spin(x, n_iter)
    torch.cuda.synchronize()
    print(f"n_iter={n_iter} last_ms={ms:.3f}")


def dobench():
    n = 1 << 27
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    ms = triton.testing.do_bench(lambda: add(x, y, out), warmup=25, rep=300, return_mode="mean")
    print(f"dobench_ms={ms:.6f}")


def profiler():
    x = torch.randn(1 << 20, device="cuda")
    out = torch.empty_like(x)
    add(x, x, out)  # trlat (if on) has started before the profiler
    torch.cuda.synchronize()
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(20):
            add(x, x, out)
            y = torch.relu(out) * 2.0
        torch.cuda.synchronize()
    kernels = [e for e in prof.events() if getattr(e, "device_type", None) == torch.autograd.DeviceType.CUDA]
    timed = [a for a in prof.key_averages() if getattr(a, "self_device_time_total", 0) > 0]
    print(f"profiler_kernels={max(len(kernels), len(timed))}")
    print(f"checksum={y.sum().item():.3f}")


def idle():
    torch.cuda.init()
    torch.cuda.current_device()
    print("idle_done=1")


def exit_thread():
    x = torch.zeros(1, device="cuda")
    tiny_kernel[(1,)](x)
    torch.cuda.synchronize()
    libc = ctypes.CDLL(None)

    def launch_then_exit():
        for _ in range(2000):
            tiny_kernel[(1,)](x)
        print("exit_thread_exits=1", flush=True)
        libc.exit(0)  # C exit() from this thread, kernels still in flight

    t = threading.Thread(target=launch_then_exit)
    t.start()
    t.join()
    print("not reached")


def fork():
    x = torch.zeros(1, device="cuda")
    for _ in range(100):
        tiny_kernel[(1,)](x)
    torch.cuda.synchronize()
    pid = os.fork()
    if pid == 0:
        print("child_exits=1", flush=True)
        sys.exit(0)  # normal exit: atexit handlers run in the child
    _, status = os.waitpid(pid, 0)
    for _ in range(100):
        tiny_kernel[(1,)](x)
    torch.cuda.synchronize()
    print(f"child_status={status}")


if __name__ == "__main__":
    globals()[sys.argv[1]]()
