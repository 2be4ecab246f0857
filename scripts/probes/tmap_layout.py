"""Where cuTensorMapEncodeTiled puts the global address in a CUtensorMap:
encodes descriptors over a real allocation, each with one address bit
flipped, and prints which bits of the 128 bytes changed (device probe)."""
import ctypes
import sys

import torch

cuda = ctypes.CDLL("libcuda.so.1")
enc = cuda.cuTensorMapEncodeTiled
enc.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64),
                ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(ctypes.c_uint),
                ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
buf = ctypes.create_string_buffer(256)
m = (ctypes.addressof(buf) + 63) // 64 * 64


def encode(addr, dtype, dims, strides, box, swizzle, fill):
    r = len(dims)
    d = (ctypes.c_uint64 * 5)(*dims)
    s = (ctypes.c_uint64 * 5)(*strides)
    b = (ctypes.c_uint * 5)(*box)
    e = (ctypes.c_uint * 5)(*([1] * 5))
    ctypes.memset(m, 0xAB, 128)
    rc = enc(m, dtype, r, addr, d, s, b, e, 0, swizzle, 2, fill)
    return rc, int.from_bytes(ctypes.string_at(m, 128), "little")


x = torch.empty(1 << 24, device="cuda", dtype=torch.bfloat16)
base = x.data_ptr()
print("base", hex(base))
cases = [
    ("bf16 2d sw128", 10, [4096, 1024], [8192], [64, 128], 3, 0),
    ("fp16 2d sw64", 6, [512, 256], [1024], [32, 64], 2, 0),
    ("fp32 3d none nan", 7, [64, 32, 8], [256, 8192], [16, 8, 2], 0, 1),
    ("bf16 1d", 10, [4096], [], [256], 0, 0),
]
for name, dt, dims, st, box, sw, fill in cases:
    rc0, d0 = encode(base, dt, dims, st, box, sw, fill)
    print("case", name, "rc", rc0, "desc", d0.to_bytes(128, "little").hex())
    for i in range(0, 64):
        rc, d = encode(base ^ (1 << i), dt, dims, st, box, sw, fill)
        diff = d ^ d0
        bits = [j for j in range(1024) if diff >> j & 1]
        print(f"  bit {i:2d}: rc {rc} changed {bits[:8]}{'...' if len(bits) > 8 else ''}")
    for off in (16, 48, 4096, 123456 * 16):
        rc, d = encode(base + off, dt, dims, st, box, sw, fill)
        w0 = d & ((1 << 64) - 1)
        print(f"  +{off}: rc {rc} word0 {hex(w0)} expect {hex(base + off)} rest-equal {(d >> 64) == (d0 >> 64)}")
sys.stdout.flush()
