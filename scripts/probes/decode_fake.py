# A probe: the decode step of scripts/bench_fastpath.py (its ten launches, empty
# kernels) on the stand-in Triton with torch CPU tensors and the fake driver:
# best us per step of ROUNDS rounds over STEPS lengths (scripts/probes/callgrind_hits.sh).
#   python decode_fake.py STEPS [ROUNDS]
import sys
import time

from standin import torch, triton, tl

@triton.jit
def rms_kernel(x_ptr, w_ptr, y_ptr, n, eps, BLOCK: tl.constexpr):
    pass
@triton.jit
def scores_kernel(q_ptr, k_ptr, s_ptr, L, D: tl.constexpr, BLOCK: tl.constexpr):
    pass
@triton.jit
def softmax_kernel(s_ptr, p_ptr, L, BLOCK: tl.constexpr):
    pass
@triton.jit
def pv_kernel(p_ptr, v_ptr, o_ptr, L, D: tl.constexpr, BLOCK: tl.constexpr):
    pass
@triton.jit
def axpy_kernel(x_ptr, y_ptr, o_ptr, a, n, BLOCK: tl.constexpr):
    pass
@triton.jit
def append_kernel(src_ptr, cache_ptr, pos, D: tl.constexpr):
    pass

H, D, L0 = 1024, 64, 128
steps = int(sys.argv[1])
Lmax = L0 + steps + 1
x, w, h, y = (torch.randn(H) for _ in range(4))
q, o = torch.randn(D), torch.empty(D)
kc, vc = torch.randn(Lmax, D), torch.randn(Lmax, D)
s, p = torch.empty(Lmax), torch.empty(Lmax)

def step(L):
    rms_kernel[(1, )](x, w, h, H, 1e-6, BLOCK=H)
    append_kernel[(1, )](q, kc, L - 1, D=D)
    append_kernel[(1, )](q, vc, L - 1, D=D)
    scores_kernel[(triton.cdiv(L, 64), )](q, kc, s, L, D=D, BLOCK=64)
    softmax_kernel[(1, )](s, p, L, BLOCK=triton.next_power_of_2(L))
    pv_kernel[(1, )](p, vc, o, L, D=D, BLOCK=64)
    axpy_kernel[(triton.cdiv(H, 256), )](h, x, y, 0.5, H, BLOCK=256)
    rms_kernel[(1, )](y, w, h, H, 1e-6, BLOCK=H)
    axpy_kernel[(triton.cdiv(H, 256), )](h, y, x, 0.25, H, BLOCK=256)
    axpy_kernel[(triton.cdiv(D, 64), )](o, q, q, 0.01, D, BLOCK=64)

lengths = list(range(L0, L0 + steps))
for L in lengths:
    step(L)
best = 1e9
for r in range(int(sys.argv[2]) if len(sys.argv) > 2 else 5):
    t0 = time.perf_counter()
    for L in lengths:
        step(L)
    best = min(best, (time.perf_counter() - t0) / steps * 1e6)
print("us/step %.2f" % best)
