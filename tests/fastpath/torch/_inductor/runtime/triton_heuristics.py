# torch 2.11's torch/_inductor/runtime/triton_heuristics.py, reduced to
# what decides what CachingAutotuner.run launches: run() reads the same
# names in the same order (the fast path's Inductor layer accepts no run
# that reads others), and TritonCompileResult.make_launcher generates its
# launcher the same way: def launcher(<args>, stream) computing grid_0..2
# from the int arguments and calling the kernel's CudaLauncher with the
# kernel's function, packed metadata, bin.launch_metadata(...) (whenever a
# launch enter hook object is set) and the hooks; StaticTritonCompileResult
# generates one that calls a StaticallyLaunchedCudaKernel's run with the
# grid, the stream and the arguments that are not constexprs (the static
# launcher, 2.11's default). Not torch's code: a model of it, for trlat's
# CPU tests. Compiling goes through the stand-in JIT's
# warmup (torch compiles an ASTSource); a kernel's example arguments come
# with its triton_meta.
import os
import time

import torch
import triton
from torch.autograd import profiler as autograd_profiler
from torch.utils._debug_mode import get_active_debug_mode
from triton import knobs
from triton.runtime.jit import KernelInterface

from torch._static_cuda_launcher import _functions as _cubin_functions

from .static_triton_launcher import StaticallyLaunchedCudaKernel

dumped = []  # what _dump_launch_params and _dump_launch_tensors wrote
saved = []  # save_gpu_kernel's calls
tuned = []  # coordinate_descent_tuning's calls


class Config:

    def __init__(self, kwargs, num_warps=4, num_stages=1, found_by_coordesc=False):
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.found_by_coordesc = found_by_coordesc


class DeviceProperties:

    def __init__(self, type="cuda", index=0):
        self.type = type
        self.index = index


def _ceildiv(numel, block):
    """GridExpr.ceildiv's text for an int block: -(numel // -block)."""
    return numel if block == 1 else "-((%s) // -(%d))" % (numel, block)


def _dump_launch_params(args, kwargs, launcher, kernel_name, grid):
    dumped.append(("params", kernel_name, grid))


def _dump_launch_tensors(args, filename, kernel_hash, kernel_name):
    dumped.append(("tensors", kernel_name))


class CompileResult:
    """TritonCompileResult: a CompiledKernel and its config."""

    def __init__(self, kernel, config, compile_meta, inductor_meta):
        self.kernel = kernel
        self.config = config
        self.compile_meta = compile_meta
        self.inductor_meta = inductor_meta

    def _grid_lines(self):
        kw, grid = self.config.kwargs, self.inductor_meta.get("grid", ("xnumel", ))
        lines = []
        for i, dim in enumerate(("x", "y", "z")):
            if i < len(grid):
                g = _ceildiv(grid[i], kw.get(dim.upper() + "BLOCK", 1))
                if dim == "y" and self.inductor_meta.get("max_y_grid"):
                    g = "min(%s, %d)" % (g, self.inductor_meta["max_y_grid"])
            else:
                g = "1"
            lines.append("    grid_%d = %s" % (i, g))
        return lines

    def make_launcher(self):
        binary = self.kernel
        fn = binary.src.fn
        binary._init_handles()
        constexprs = [p.name for p in fn.params if p.is_constexpr]
        constants = dict(self.config.kwargs)
        # Triton 3.6 takes every argument, constexprs as literals (attrs dict)
        def_args = [a for a in fn.arg_names if a not in constants]
        call_args = [repr(constants[a]) if a in constants and a in constexprs else a for a in fn.arg_names]
        launch_enter = knobs.runtime.launch_enter_hook
        launch_exit = knobs.runtime.launch_exit_hook
        scope = {
            "grid_meta": self.config.kwargs,
            "bin": binary,
            "launch_enter_hook": launch_enter,
            "launch_exit_hook": launch_exit,
            "metadata": binary.packed_metadata,
            "shared": binary.metadata.shared,
            "num_warps": binary.metadata.num_warps,
            "cta_args": (),
            "function": binary.function,
            "runner": self.runner(binary),
            "torch": torch,
            "triton": triton,
        }
        if launch_enter:
            launch_metadata = "bin.launch_metadata((grid_0, grid_1, grid_2), stream, %s)" % ", ".join(call_args)
        else:
            launch_metadata = "None"
        runner_args = self.runner_args(launch_metadata, call_args)
        code = "\n".join(["def launcher(%s, stream):" % ", ".join(def_args), *self._grid_lines(),
                          "    runner(%s)" % ", ".join(runner_args)])
        exec(code, scope)
        launcher = scope["launcher"]
        launcher.config = self.config
        launcher.shared = binary.metadata.shared
        launcher.store_cubin = self.inductor_meta.get("store_cubin", False)
        if launcher.store_cubin:
            launcher.fn = fn
            launcher.bin = binary
        return launcher

    def runner(self, binary):
        return binary.run

    def runner_args(self, launch_metadata, call_args):
        return ["grid_0", "grid_1", "grid_2", "stream", "function", "metadata", launch_metadata,
                "launch_enter_hook", "launch_exit_hook", *call_args]


class OtherRunner:
    """A runner of a shape like the static launcher's, run(grid_0, grid_1,
    grid_2, stream, *args), a bound method of a class the fast path does
    not know (it launches through Triton's launcher)."""

    def __init__(self, binary):
        self.binary = binary

    def run(self, grid_0, grid_1, grid_2, stream, *args):
        b = self.binary
        b.run(grid_0, grid_1, grid_2, stream, b.function, b.packed_metadata, None, None, None, *args)


class OtherRunnerCompileResult(CompileResult):

    def runner(self, binary):
        return OtherRunner(binary).run

    def runner_args(self, launch_metadata, call_args):
        return ["grid_0", "grid_1", "grid_2", "stream", *call_args]


class StaticTritonCompileResult(CompileResult):
    """2.11's: the kernel loaded through the static launcher, whose run the
    launcher calls with the grid, the stream and the arguments that are
    not constexprs."""

    def make_launcher(self):
        binary = self.kernel
        binary._init_handles()
        path = "/fake/cubin/%s-%d.cubin" % (binary.name, id(binary))
        _cubin_functions[path] = binary.function  # what loading the cubin at path returns
        binary._cubin_path = path
        k = StaticallyLaunchedCudaKernel(binary)
        k.load_kernel(0)
        fn = binary.src.fn
        constants = dict(self.config.kwargs)
        def_args = [a for a in fn.arg_names if a not in constants]
        call_args = [a for i, a in enumerate(k.arg_names) if i not in k.full_constexprs]
        code = "\n".join(["def launcher(%s, stream):" % ", ".join(def_args), *self._grid_lines(),
                          "    runner(%s)" % ", ".join(["grid_0", "grid_1", "grid_2", "stream", *call_args])])
        scope = {"runner": k.run}
        exec(code, scope)
        launcher = scope["launcher"]
        launcher.config = self.config
        launcher.n_regs, launcher.n_spills = k.n_regs, k.n_spills
        launcher.shared = k.shared
        launcher.cache_hash = binary.name
        launcher.store_cubin = False
        launcher._is_static = True
        return launcher


class CachingAutotuner(KernelInterface):

    def __init__(self, fn, triton_meta, configs, inductor_meta=None, static=False):
        super().__init__()
        self.fn = fn
        self.device_props = triton_meta["device"]
        self.triton_meta = {**triton_meta, "device": self.device_props.index, "device_type": self.device_props.type}
        self.inductor_meta = {} if inductor_meta is None else inductor_meta
        self.configs = configs
        self.static = static
        self.cuda_kernel_saved = False
        self.launchers = []
        self.compile_results = []
        self.filename = None
        self.kernel_hash = ""
        self.precompile_time_taken_ns = 0
        self.dump_launch_params = False
        self.dump_launch_tensors = False
        self.kernels_to_dump = []
        self.triton_interpret = False

    def precompile(self):
        example = self.triton_meta["example_args"]
        cls = {False: CompileResult, True: StaticTritonCompileResult, "other": OtherRunnerCompileResult}[self.static]
        self.compile_results = [
            cls(self.fn.warmup(*example, grid=(1, ), **c.kwargs), c, self.triton_meta, self.inductor_meta)
            for c in self.configs
        ]
        self.launchers = [r.make_launcher() for r in self.compile_results]

    def autotune_to_one_config(self, *args, **kwargs):
        self.launchers = self.launchers[-1:]  # the benchmark's pick

    def coordinate_descent_tuning(self, launcher, *args, **kwargs):
        tuned.append(self.fn.__name__)
        found = self.inductor_meta.get("coordesc_finds", True)
        r = self.compile_results[-1]
        cfg = Config(launcher.config.kwargs, launcher.config.num_warps, found_by_coordesc=found)
        return type(r)(r.kernel, cfg, r.compile_meta, r.inductor_meta).make_launcher()

    def save_gpu_kernel(self, stream, launcher):
        saved.append(self.fn.__name__)
        self.cuda_kernel_saved = True

    def get_profiler_kwargs(self, stream, launcher):
        return {"kernel_backend": "triton", "stream": stream, "num_warps": launcher.config.num_warps}

    def get_device_interface(self):
        return None

    def _interpret_args_grid(self, args, cfg):
        return args, (1, 1, 1)

    def run(self, *args, stream, benchmark_run=False, **kwargs):
        debug_mode = get_active_debug_mode()
        debug_call = None
        if debug_mode:
            arg_names = list(self.triton_meta.get("signature", {}).keys())
            kernel_kwargs = dict(zip(arg_names, args))
            kernel_kwargs.update(kwargs)
            debug_call = debug_mode.record_triton_kernel(kernel_name=self.fn.__name__, kwargs=kernel_kwargs)

        if hasattr(triton, "set_allocator"):

            def alloc_fn(size, align, stream):
                return torch.empty(size, dtype=torch.int8, device=self.device_props.type)

            triton.set_allocator(alloc_fn)

        if self.triton_interpret:
            args, grid = self._interpret_args_grid(args, self.configs[0])
            return self.fn[grid](*args, **kwargs, **self.configs[0].kwargs)

        if len(self.launchers) != 1:
            if len(self.launchers) == 0:
                start_time = time.time_ns()
                self.precompile()
                self.precompile_time_taken_ns = time.time_ns() - start_time
            if len(self.launchers) > 1:
                self.autotune_to_one_config(*args, **kwargs)

        if not getattr(self.launchers[0].config, "found_by_coordesc",
                       False) and self.inductor_meta.get("coordinate_descent_tuning", False):
            self.launchers = [self.coordinate_descent_tuning(self.launchers[0], *args, **kwargs)]

        (launcher, ) = self.launchers
        if launcher.store_cubin and (not benchmark_run or not self.cuda_kernel_saved):
            self.save_gpu_kernel(stream, launcher)

        args_without_constexprs = tuple(args)

        if self.dump_launch_params:
            new_args, grid = self._interpret_args_grid(args, launcher.config)
            _dump_launch_params(new_args, kwargs, launcher, self.fn.__name__, grid)

        if self.dump_launch_tensors:
            if not self.kernels_to_dump or any(kernel_name in self.fn.__name__ for kernel_name in self.kernels_to_dump):
                _dump_launch_tensors(args, self.filename, self.kernel_hash, self.fn.__name__)

        if autograd_profiler._is_profiler_enabled:
            profiler_kwargs = self.get_profiler_kwargs(stream, launcher)
            with torch._C._profiler._RecordFunctionFast(self.inductor_meta.get("kernel_name", "triton kernel"),
                                                        args_without_constexprs, profiler_kwargs):
                result = launcher(*args, **kwargs, stream=stream)
        else:
            result = launcher(*args, **kwargs, stream=stream)

        if debug_call:
            debug_call.finalize(self.get_device_interface())
        return result

    if os.environ.get("FAKE_INDUCTOR_RUN_UNKNOWN"):  # a torch whose run() reads a name 2.11's does not
        _modelled_run = run

        def run(self, *args, stream, benchmark_run=False, **kwargs):
            self.unknown_flag = True
            return self._modelled_run(*args, stream=stream, benchmark_run=benchmark_run, **kwargs)
