# torch 2.11's torch/_inductor/runtime/static_triton_launcher.py, reduced
# to what decides a launch: StaticallyLaunchedTritonKernel reads the
# CompiledKernel's name, signature, num_warps, shared and scratch fields,
# load_kernel() gets the function through C_impl._load_kernel, and run()
# is 2.11's own body (the same names and constants: the fast path's static
# layer accepts no run that reads others). StaticallyLaunchedCudaKernel's
# C_impl is a cached_property returning torch._C._StaticCudaLauncher. Not
# torch's code: a model of it, for trlat's CPU tests. Triton 3.6's
# kernels have both scratch fields (0 here), so run() appends two Nones.
import os
from functools import cached_property

from ..utils import is_rocm


class StaticallyLaunchedTritonKernel:

    @cached_property
    def C_impl(self):
        raise NotImplementedError

    def __init__(self, kernel):
        self.name = kernel.src.fn.__name__
        self.cubin_path = kernel._cubin_path
        self.arg_names = kernel.src.fn.arg_names
        self.hash = kernel.name
        self.num_warps = kernel.metadata.num_warps
        self.shared = kernel.metadata.shared
        self.has_global_scratch = hasattr(kernel.metadata, "global_scratch_size")
        self.has_profile_scratch = hasattr(kernel.metadata, "profile_scratch_size")
        self.arg_tys = self.arg_ty_from_signature(kernel.src)
        self.function = None

    def load_kernel(self, device):
        if self.function is not None:
            return
        (self.function, self.n_regs, self.n_spills) = self.C_impl._load_kernel(self.cubin_path, self.name,
                                                                                self.shared, device)
        self.cubin_path = None

    @staticmethod
    def type_mappings():
        return {"i1": "i", "i8": "b", "i16": "h", "i32": "i", "i64": "l", "u1": "I", "u8": "B", "u16": "H",
                "u32": "I", "u64": "K", "fp16": "f", "bf16": "f", "fp32": "f", "f32": "f", "fp64": "d"}

    def arg_ty_from_signature(self, src):
        params = []
        self.full_constexprs = []
        for i, (name, ty) in enumerate(src.signature.items()):
            if ty == "constexpr":
                self.full_constexprs.append(i)
            else:
                params.append("O" if ty[0] == "*" else self.type_mappings()[ty])
        return "".join(params)

    def run(
        self,
        grid_x: int,
        grid_y: int,
        grid_z: int,
        stream: int,
        *args,
    ) -> None:
        """Actually run the kernel at runtime. This function is the hot codepath."""
        assert self.function is not None
        arg_tys = self.arg_tys
        if is_rocm():
            arg_tys = arg_tys + "OO"
            args = (*args, None, None)
        else:
            for has_scratch in [self.has_global_scratch, self.has_profile_scratch]:
                if has_scratch:
                    arg_tys = arg_tys + "O"
                    args = (*args, None)
        assert len(args) == len(arg_tys)
        self.C_impl._launch_kernel(
            self.function,
            grid_x,
            grid_y,
            grid_z,
            self.num_warps,
            self.shared,
            arg_tys,
            args,
            stream,
        )

    if os.environ.get("FAKE_STATIC_RUN_UNKNOWN"):  # a torch whose run reads a name 2.11's does not
        _modelled_run = run

        def run(self, grid_x, grid_y, grid_z, stream, *args):
            self.unknown_flag = True
            return self._modelled_run(grid_x, grid_y, grid_z, stream, *args)


class StaticallyLaunchedCudaKernel(StaticallyLaunchedTritonKernel):

    @cached_property
    def C_impl(self):
        from torch._C import _StaticCudaLauncher

        return _StaticCudaLauncher
