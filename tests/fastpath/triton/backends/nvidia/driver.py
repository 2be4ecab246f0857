# backends/nvidia/driver.py (3.6): CudaLauncher and what make_launcher's
# generated C code does with a call: PyArg_ParseTuple's formats for each
# signature type (i, L, K, I, h, H, B, b, d; constexpr "O", ignored),
# getPointer (an int, None, or data_ptr(), which cuPointerGetAttribute must
# know: the fake driver's device memory, where the stand-in torch's CPU
# tensors live too, so that their pointers are packed as they are),
# the kernel_metadata tuple "iii", the enter/exit hooks, scratch allocated
# per launch, two trailing scratch pointers, cluster/cooperative/PDL
# attributes, no launch for an empty grid, RuntimeError("Triton Error
# [CUDA]: ...") for a failed one. Host tensor descriptors as
# wrap_handle_tensordesc and make_tensordesc_arg expand them: with the
# kernel's tensordesc_meta a CUtensorMap that fill_tma_descriptor encodes
# through the driver (driver.c fillTMADescriptor), else decomposed.
import ctypes
import operator
import os
import re
import struct

_cuda = ctypes.CDLL("libcuda.so.1")
_err = _cuda.cuGetErrorString
_err.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]


class LaunchAttr(ctypes.Structure):
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", ctypes.c_ubyte * 64)]


class LaunchConfig(ctypes.Structure):
    # the padding named: the generated code fills a CUlaunchConfig on its
    # stack member by member, so these bytes hold whatever was there
    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint), ("gridDimZ", ctypes.c_uint),
                ("blockDimX", ctypes.c_uint), ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("pad0", ctypes.c_uint), ("hStream", ctypes.c_void_p),
                ("attrs", ctypes.POINTER(LaunchAttr)), ("numAttrs", ctypes.c_uint), ("pad1", ctypes.c_uint)]


_junk = [0]


def _stack_junk(cfg, attrs, n, used):
    """What an uninitialized stack leaves in the bytes the driver does not
    read: the padding, and each attribute's value past its used bytes."""
    _junk[0] = (_junk[0] * 1103515245 + 12345) & 0xffffffff
    cfg.pad0 = cfg.pad1 = _junk[0]
    for i in range(n):
        for j in range(used[i], 64):
            attrs[i].value[j] = (_junk[0] >> (j % 24)) & 0xff
        attrs[i].pad = bytes([_junk[0] & 0xff] * 4)


_launch_ex = _cuda.cuLaunchKernelEx  # dlsym, as the generated launcher does
_launch_ex.argtypes = [ctypes.POINTER(LaunchConfig), ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]

CU_LAUNCH_ATTRIBUTE_COOPERATIVE = 2
CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4
CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE = 5
CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6

_SIZES = {"i1": 1, "i8": 1, "u1": 1, "u8": 1, "i16": 2, "u16": 2, "fp16": 2, "bf16": 2, "i32": 4, "u32": 4,
          "fp32": 4, "f32": 4, "i64": 8, "u64": 8, "fp64": 8}
# PyArg_ParseTuple's integer formats: (bytes, signed, checked range or None: masked)
_INTS = {"i32": (4, True, (-2**31, 2**31 - 1)), "i64": (8, True, (-2**63, 2**63 - 1)), "u64": (8, False, None),
         "u32": (4, False, None), "i16": (2, True, (-2**15, 2**15 - 1)), "u16": (2, False, None),
         "u1": (1, False, None), "u8": (1, False, None), "i1": (1, False, (0, 255)), "i8": (1, False, (0, 255))}


def size_of(ty):
    return 8 if ty[0] == "*" else 128 if ty == "nvTmaDesc" else _SIZES[ty]


def expand_signature(signature, tensordesc_meta):
    """driver.py expand_signature: each tensordesc<T[...]> as the launcher packs it."""
    output = []
    idx = 0
    for sig in signature:
        if isinstance(sig, str) and sig.startswith("tensordesc"):
            meta = tensordesc_meta[idx] if tensordesc_meta else None
            idx += 1
            match = re.match("tensordesc<([^[>]*)\\[([^]]*)\\]", sig)
            dtype = match.group(1)
            ndim = match.group(2).count(",") + 1
            if meta is None:
                output.append("*" + dtype)
                output.extend(["i64"] * (2 * ndim))
                output.append("i1")
            else:
                output.append("nvTmaDesc")
            output.extend(["i32"] * ndim)
            output.extend(["i64"] * ndim)
        else:
            output.append(sig)
    assert not tensordesc_meta or idx == len(tensordesc_meta)
    return output


class PyCUtensorMap:
    """driver.c's PyCUtensorMap: a CUtensorMap (128 bytes, 64-aligned)."""

    def __init__(self):
        self._buf = ctypes.create_string_buffer(192)
        self.addr = (ctypes.addressof(self._buf) + 63) // 64 * 64

    def raw(self):
        return ctypes.string_at(self.addr, 128)


_encode = _cuda.cuTensorMapEncodeTiled
_encode.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64),
                    ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(ctypes.c_uint),
                    ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]


def fill_tma_descriptor(ptr, swizzle, elem_size, elem_type, block_size, shape, strides, padding):
    """driver.c fillTMADescriptor: dimensions innermost first, strides in bytes."""
    rank = len(block_size)
    box = (ctypes.c_uint * 5)(*[int(b) for b in reversed(block_size)])
    dims = (ctypes.c_uint64 * 5)(*[int(d) for d in reversed(shape)])
    st = (ctypes.c_uint64 * 5)(*[elem_size * int(s) for s in reversed(strides[:-1])])
    ones = (ctypes.c_uint * 5)(*([1] * 5))
    m = PyCUtensorMap()
    rc = _encode(m.addr, elem_type, rank, ptr, dims, st, box, ones, 0, swizzle, 2, padding)
    if rc:
        raise RuntimeError("Triton Error [CUDA]: cuTensorMapEncodeTiled failed: %d" % rc)
    return m


TMA_DTYPE_DEVICE_TO_HOST = dict((i, i) for i in range(16))
TMA_DTYPE_DEVICE_TO_HOST[8] = 10
TMA_DTYPE_DEVICE_TO_HOST[9] = 8
TMA_DTYPE_DEVICE_TO_HOST[10] = 9


def make_tensordesc_arg(arg, metadata):
    if metadata is None:
        return [arg.base, *arg.shape, *arg.strides, arg.padding == "nan", *arg.shape, *arg.strides]
    swizzle = metadata["swizzle"]
    elem_size = metadata["elem_size"]
    elem_type = metadata["elem_type"]
    block_size = metadata["block_size"]
    shape = arg.shape
    strides = arg.strides
    assert strides[-1] == 1
    padding = 1 if arg.padding == "nan" else 0
    cu_tensor_map = fill_tma_descriptor(arg.base.data_ptr(), swizzle, elem_size, TMA_DTYPE_DEVICE_TO_HOST[elem_type],
                                        block_size, shape, strides, padding)
    return [cu_tensor_map, *shape, *strides]


_BASE_ARGS_FORMAT_LEN = 13


def wrap_handle_tensordesc(launcher, signature, tensordesc_meta):
    has_tensor_desc_arg = any(isinstance(sig, str) and sig.startswith("tensordesc") for sig in signature.values())
    if not has_tensor_desc_arg:
        return launcher
    tensordesc_indices = set(
        [i for i, sig in enumerate(signature.values()) if isinstance(sig, str) and sig.startswith("tensordesc")])
    assert not tensordesc_meta or len(tensordesc_meta) == len(tensordesc_indices)
    if not tensordesc_meta:
        tensordesc_meta = [None] * len(tensordesc_indices)

    def inner(*args):
        final_args = list(args[:_BASE_ARGS_FORMAT_LEN])
        tensordesc_idx = 0
        for i, arg in enumerate(args[_BASE_ARGS_FORMAT_LEN:]):
            if i in tensordesc_indices:
                final_args.extend(make_tensordesc_arg(arg, tensordesc_meta[tensordesc_idx]))
                tensordesc_idx += 1
            else:
                final_args.append(arg)
        return launcher(*final_args)

    return inner


def _pointer(v, idx):
    if isinstance(v, int):  # PyLong_Check: PyLong_AsUnsignedLongLong
        if not 0 <= v < 2**64:
            raise OverflowError("can't convert negative int to unsigned")
        return v
    if v is None:
        return 0
    dp = getattr(v, "data_ptr", None)
    if dp is None:
        raise TypeError("Pointer argument must be either uint64 or have data_ptr method")
    p = dp()
    if not isinstance(p, int):
        raise TypeError("data_ptr method of Pointer object must return 64-bit int")
    if p:  # getPointer asks the driver; memory it does not know raises
        dev = ctypes.c_uint64(0)
        rc = _cuda.cuPointerGetAttribute(ctypes.byref(dev), 3, ctypes.c_uint64(p))  # ..._DEVICE_POINTER
        if rc == 1:  # CUDA_ERROR_INVALID_VALUE
            raise ValueError("Pointer argument (at %d) cannot be accessed from Triton (cpu tensor?)" % idx)
        if rc:
            raise RuntimeError("Triton Error [CUDA]: %d" % rc)
        p = dev.value
    return p


def _pack(ty, v, idx):
    if ty == "nvTmaDesc":  # getTmaDesc: the type checked, its bytes by value
        if type(v) is not PyCUtensorMap:
            raise TypeError("object must be of type PyCUtensorMap, got %s" % type(v).__name__)
        return v.raw()
    if ty[0] == "*":
        return struct.pack("<Q", _pointer(v, idx))
    if ty in ("fp32", "f32", "fp16", "bf16", "fp64"):
        d = float(v)  # "d": PyFloat_AsDouble
        if ty in ("fp32", "f32"):
            return bytes(ctypes.c_float(d))  # pack_fp32: a C cast (inf past FLT_MAX)
        if ty == "fp64":
            return struct.pack("<d", d)
        if ty == "fp16":
            return struct.pack("<e", d)
        return bytes(ctypes.c_float(d))[2:]
    n, signed, rng = _INTS[ty]
    x = operator.index(v)  # a float raises TypeError, as the format does
    if rng and not rng[0] <= x <= rng[1]:
        raise OverflowError("signed integer is greater than maximum")
    return (x & ((1 << (8 * n)) - 1)).to_bytes(n, "little")


# FAKE_TRITON_LAUNCH_SKEW=N: every launcher packs an i32 argument of N to
# 999 one higher (a launcher that does what no memoized block says, once
# its values grow: verify mode must notice)
_SKEW = int(os.environ.get("FAKE_TRITON_LAUNCH_SKEW", "0"))


def make_launcher(constants, signature):
    types = list(signature.values())

    def launch(gridX, gridY, gridZ, stream, function, coop, pdl, gs, ps, kernel_metadata, launch_metadata, enter,
               exit_, *args):
        if len(args) != len(types):
            raise TypeError("function takes exactly %d arguments (%d given)" % (len(types) + 13, len(args) + 13))
        num_warps, num_ctas, shared = kernel_metadata
        if enter is not None:
            enter(launch_metadata)
        skew = (lambda ty, a: a + 1 if _SKEW and ty == "i32" and type(a) is int and _SKEW <= a < 1000 else a)
        blobs = [_pack(ty, skew(ty, a), i) for i, (ty, a) in enumerate(zip(types, args)) if ty != "constexpr"]
        blobs += [struct.pack("<Q", gs or 0), struct.pack("<Q", ps or 0)]
        bufs = [ctypes.create_string_buffer(b, len(b)) for b in blobs]
        params = (ctypes.c_void_p * len(bufs))(*[ctypes.cast(b, ctypes.c_void_p) for b in bufs])
        if gridX * gridY * gridZ > 0:
            attrs = (LaunchAttr * 4)()
            n = 0
            if pdl:
                attrs[n].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
                attrs[n].value[0] = 1
                n += 1
            if coop:
                attrs[n].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE
                attrs[n].value[0] = 1
                n += 1
            if num_ctas != 1:
                attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
                attrs[n].value[0:12] = list(struct.pack("<III", num_ctas, 1, 1))
                n += 1
                attrs[n].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE
                attrs[n].value[0] = 1
                n += 1
            cfg = LaunchConfig(gridX * num_ctas, gridY, gridZ, 32 * num_warps, 1, 1, shared, 0,
                               ctypes.c_void_p(stream), attrs, n, 0)
            _stack_junk(cfg, attrs, n, [12 if attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION else 4
                                        for i in range(n)])
            rc = _launch_ex(ctypes.byref(cfg), function, params, None)
            if rc != 0:
                s = ctypes.c_char_p()
                _err(rc, ctypes.byref(s))
                raise RuntimeError("Triton Error [CUDA]: " + s.value.decode())
        if exit_ is not None:
            exit_(launch_metadata)

    return launch


class CudaLauncher(object):

    def __init__(self, src, metadata):
        constants = src.constants if hasattr(src, "constants") else dict()
        signature = {idx: value for idx, value in src.signature.items()}
        tensordesc_meta = getattr(metadata, "tensordesc_meta", None)
        expanded = expand_signature(signature.values(), tensordesc_meta)
        self.num_ctas = getattr(metadata, "num_ctas", 1)
        self.launch = wrap_handle_tensordesc(make_launcher(constants, dict(enumerate(expanded))), signature,
                                             tensordesc_meta)
        self.global_scratch_size = metadata.global_scratch_size
        self.global_scratch_align = 1
        self.profile_scratch_size = metadata.profile_scratch_size
        self.profile_scratch_align = 1
        self.launch_cooperative_grid = metadata.launch_cooperative_grid
        self.launch_pdl = metadata.launch_pdl

    def __call__(self, gridX, gridY, gridZ, stream, function, *args):

        def allocate_scratch(size, align, base):
            if size > 0:
                return base  # the stand-in allocator: a fixed address
            return None

        global_scratch = allocate_scratch(self.global_scratch_size, self.global_scratch_align, 0x5000)
        profile_scratch = allocate_scratch(self.profile_scratch_size, self.profile_scratch_align, 0x6000)
        self.launch(gridX, gridY, gridZ, stream, function, self.launch_cooperative_grid, self.launch_pdl,
                    global_scratch, profile_scratch, *args)
