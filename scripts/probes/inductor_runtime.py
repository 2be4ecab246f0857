# What torch.compile's runtime looks like on the GPU machine, for the fast
# path's CachingAutotuner layer: the installed torch/_inductor/runtime
# sources, CachingAutotuner.run's names, and each launcher's bytecode and
# attributes after a tiny compiled function ran (with the static CUDA
# launcher as configured by TORCHINDUCTOR_USE_STATIC_CUDA_LAUNCHER).
#   python3 scripts/probes/inductor_runtime.py OUTDIR
import dis
import gc
import os
import shutil
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
import torch
import triton
from torch._inductor.runtime import triton_heuristics as th

rt = os.path.dirname(th.__file__)
for f in ("triton_heuristics.py", "static_cuda_launcher.py", "static_triton_launcher.py", "triton_compat.py"):
    if os.path.exists(os.path.join(rt, f)):
        shutil.copy(os.path.join(rt, f), os.path.join(out, f))
print("versions", sys.version.split()[0], torch.__version__, triton.__version__)
print("static default", torch._inductor.config.use_static_cuda_launcher)
run = th.CachingAutotuner.run
print("run co_names", sorted(run.__code__.co_names))
print("run co_varnames", run.__code__.co_varnames, "argcount", run.__code__.co_argcount,
      "kwonly", run.__code__.co_kwonlyargcount, "flags", hex(run.__code__.co_flags))
for c in run.__code__.co_consts:
    if hasattr(c, "co_names"):
        print("run nested", c.co_name, sorted(c.co_names), c.co_freevars)


def f(x, y):
    return torch.relu(x * 2 + y).sum(dim=-1) + 1


cf = torch.compile(f)
for n in (64, 65, 130):
    x = torch.randn(4, n, device="cuda")
    cf(x, x)
torch.cuda.synchronize()
seen = 0
for o in gc.get_objects():
    if type(o).__name__ != "CachingAutotuner" or seen >= 3:
        continue
    seen += 1
    print("== autotuner", o.fn.__name__, "launchers", len(o.launchers), "grid_mode", getattr(o, "grid_mode", None))
    print("   dict keys", sorted(o.__dict__))
    print("   inductor_meta", {k: v for k, v in o.inductor_meta.items() if k in ("grid_type", "kernel_name",
                                                                             "coordinate_descent_tuning",
                                                                             "extra_launcher_args", "store_cubin")})
    for la in o.launchers:
        print("   launcher attrs", sorted(la.__dict__), "static", getattr(la, "_is_static", False))
        print("   launcher globals", sorted(k for k in la.__globals__ if k != "__builtins__"))
        r = la.__globals__.get("runner")
        print("   runner", type(r), getattr(r, "__self__", None).__class__)
        print("   code", la.__code__.co_varnames[:la.__code__.co_argcount])
        dis.dis(la)
        ks = getattr(r, "__self__", None)
        if ks is not None and type(ks).__name__ == "StaticallyLaunchedCudaKernel":
            print("   static kernel", {k: (v if not isinstance(v, (bytes, str)) or len(v) < 200 else "...")
                                        for k, v in ks.__dict__.items()})
print("autotuners seen", seen)
try:
    from torch._inductor.runtime.static_triton_launcher import StaticallyLaunchedCudaKernel as K
    kr = K.run
    print("static run", type(kr), "co_names", sorted(kr.__code__.co_names), "varnames", kr.__code__.co_varnames,
          "argcount", kr.__code__.co_argcount, "flags", hex(kr.__code__.co_flags), "consts", kr.__code__.co_consts)
    dis.dis(kr)
    print("static class dict", sorted(K.__dict__))
    from torch._C import _StaticCudaLauncher
    print("_StaticCudaLauncher", _StaticCudaLauncher, dir(_StaticCudaLauncher))
except Exception as e:  # noqa: BLE001
    print("static probe failed", type(e).__name__, e)
