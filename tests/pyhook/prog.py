# Programs for tests/integration/test_pyhook.sh: `python3 prog.py MODE [N]`.
# Each "# SITE name" comment marks a line that launches; `sites` prints them
# as file:line for the test to compare with the report.
import os
import sys
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))


def sites():
    with open(__file__) as f:
        for i, line in enumerate(f, 1):
            if "# SITE " in line and "SITE name" not in line and "print(" not in line:
                print("site %s %s:%d" % (line.split("# SITE ")[1].strip(), __file__, i))


def lib_site(path, mark):
    with open(path) as f:
        for i, line in enumerate(f, 1):
            if "# " + mark in line:
                return "%s:%d" % (path, i)


def spin_arg(v):
    end = time.perf_counter() + 300e-6
    while time.perf_counter() < end:
        pass
    return v


def cuda_first():
    """A driver call before any kernel, as torch's CUDA init makes."""
    import ctypes
    f = ctypes.c_void_p()
    ctypes.CDLL("libcuda.so.1").cuModuleGetFunction(ctypes.byref(f), ctypes.c_void_p(0x1000), b"init_kernel")
    for _ in range(3):  # a few bytecodes: the hook's pending install runs here
        pass


def main():
    mode = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    if mode == "late_import":  # CUDA first, Triton imported later
        cuda_first()
        time.sleep(0.01)
    elif mode != "first_call":
        cuda_first()
    import triton

    @triton.jit
    def add_kernel(x, y, spin_us=0, launches=None, fail=False, spin_after_us=0):
        if spin_us:
            end = time.perf_counter() + spin_us * 1e-6
            while time.perf_counter() < end:
                pass
        if fail:
            raise ValueError("bad argument %r" % (x, ))
        return launches

    if mode in ("loop", "first_call", "late_import"):
        for _ in range(n):
            add_kernel[(1, )](1, 2)  # SITE loop
    elif mode == "two_sites":
        for _ in range(n):
            add_kernel[(1, )](1, 2)  # SITE first
        for _ in range(2 * n):
            add_kernel[(1, )](1, 2)  # SITE second
        add_kernel.run(1, 2, grid=(1, ), warmup=False)  # SITE direct
    elif mode == "spin":
        t = time.perf_counter()
        for _ in range(n):
            add_kernel[(1, )](1, 2, spin_us=200)  # SITE spin
        print("wall_us_per_call %.1f" % ((time.perf_counter() - t) / n * 1e6))
    elif mode == "between":  # host time between launches: the program's own, then Triton's
        for _ in range(n):
            end = time.perf_counter() + 500e-6
            while time.perf_counter() < end:
                pass
            add_kernel[(1, )](1, 2)  # SITE own_time
        for _ in range(n):
            add_kernel[(1, )](1, 2, spin_us=200)  # SITE triton_time
    elif mode == "regions":  # launches grouped by trlat.region, nested, on two threads, as a decorator
        sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
        import trlat
        for _ in range(2):
            add_kernel[(1, )](1, 2)  # outside any region
        with trlat.region("warmup"):
            for _ in range(5):
                add_kernel[(1, )](1, 2)
        with trlat.region("step"):
            for _ in range(10):
                add_kernel[(1, )](1, 2)
            with trlat.region("inner"):
                for _ in range(3):
                    add_kernel[(1, )](1, 2)
            add_kernel[(1, )](1, 2)

        @trlat.region("worker")
        def work():
            for _ in range(4):
                add_kernel[(1, )](1, 2)
        t = threading.Thread(target=work)
        with trlat.region("main_while_worker"):  # the worker's launches are its own thread's
            t.start()
            t.join()
    elif mode == "retspin":  # Triton's return path after the launch takes 300 us
        for _ in range(n):
            add_kernel[(1, )](1, 2, spin_after_us=300)  # SITE retspin
    elif mode == "subscript":  # py->driver starts at kernel[grid], not at run()
        for _ in range(n):
            add_kernel[(1, )](spin_arg(1), 2)  # SITE argspin
        @triton.jit
        def split_kernel(x, y):
            return None

        for _ in range(n):
            f = split_kernel[(1, )]
            spin_arg(0)
            f(1, 2)  # SITE splitcall
    elif mode == "exception":
        for i in range(n):
            try:
                add_kernel[(1, )](i, 2, fail=True)  # SITE raise
            except ValueError:
                text = traceback.format_exc()
        print(text.replace(HERE, "HERE"))
        add_kernel[(1, )](1, 2)  # SITE after
    elif mode == "zero_multi":
        for _ in range(n):
            add_kernel[(1, )](1, 2, launches=0)  # SITE zero
        for _ in range(n):
            add_kernel[(1, )](1, 2, launches=3)  # SITE multi
        for _ in range(n):
            add_kernel.warmup(1, 2, grid=(1, ))  # SITE warmup
    elif mode == "nested":
        tuned = triton.autotune(configs=[{"BLOCK": 32}, {"BLOCK": 64}], key=["size"])(triton.jit(
            lambda x, y, size, BLOCK: None))
        tuned.__name__ = "tuned"
        tuned.fn.__name__ = "tuned_kernel"
        heur = triton.heuristics({"size": lambda kw: 16})(tuned)
        for _ in range(n):
            tuned[(1, )](1, 2, size=8)  # SITE autotuned
        for _ in range(n):
            heur[(1, )](1, 2)  # SITE heuristics
    elif mode == "threads":
        def worker(k):
            for _ in range(n):
                if k % 2:
                    add_kernel[(1, )](1, 2)  # SITE odd
                else:
                    add_kernel[(1, )](1, 2)  # SITE even
        ts = [threading.Thread(target=worker, args=(k, )) for k in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    elif mode == "subscript_frames":  # how many times __getitem__'s own frame ran
        ran = []
        sys.setprofile(lambda frame, event, a: ran.append(1) if event == "call" and frame.f_code.co_name ==
                       "__getitem__" else None)
        for _ in range(n):
            add_kernel[(1, )](1, 2)
        sys.setprofile(None)
        print("getitem frames", len(ran))
    elif mode == "identity":  # the patched class still behaves as before
        grid = (1, )
        k = add_kernel[grid]
        print("lambda:", k.__qualname__, k.__module__, k.__code__.co_filename.replace(HERE, "HERE"),
              k.__code__.co_firstlineno, k.__defaults__, k.__kwdefaults__, k.__code__.co_freevars,
              [c.cell_contents is {"self": add_kernel, "grid": grid}[n] for n, c in zip(k.__code__.co_freevars, k.__closure__)],
              k.__globals__ is sys.modules[type(add_kernel).__module__].__dict__)
        r = k(1, 2)
        print("returns self:", r is add_kernel)
        print("run name:", triton.JITFunction.run.__name__, triton.JITFunction.run.__qualname__)
        import inspect
        print("run signature:", inspect.signature(triton.JITFunction.run))
        print("unbound call:", triton.JITFunction.run(add_kernel, 1, 2, grid=grid, warmup=False) is add_kernel)
        bound = add_kernel.run
        print("bound:", bound.__self__ is add_kernel, bound.__func__ is triton.JITFunction.run, bound.__name__,
              bound(1, 2, grid=grid, warmup=False) is add_kernel)
        d = triton.JITFunction.__dict__["run"]
        print("get from class:", d.__get__(None, triton.JITFunction) is d)
        print("subscript name:", type(add_kernel).__getitem__.__name__)
        print("warmup returns:", add_kernel.warmup(1, 2, grid=(1, )) is add_kernel)
        print("grid callable:", add_kernel.run(1, 2, grid=lambda kw: (2, ), warmup=False) is add_kernel)
    elif mode == "compiled":  # a CompiledKernel called directly
        from triton.compiler import compile
        c = compile("compiled_kernel")
        for _ in range(n):
            c[(1, 1, 1)](spin_arg(1), 2)  # SITE compiled
        r = compile("compiled_run")
        r._init_handles()
        for _ in range(n):
            r.run(1, 1, 1, None, r.function, None, None, None, None, 1, 2)  # SITE compiled_run
        f = compile("compiled_split")[(1, 1, 1)]
        for _ in range(n):
            spin_arg(0)
            f(1, 2)  # SITE compiled_split
    elif mode == "library":  # a library's KernelInterface subclass, from site-packages
        sys.path.insert(0, os.path.join(HERE, "site-packages"))
        import fakelib
        for _ in range(n):
            fakelib.add(1, 2)  # SITE user_lib
        for _ in range(n):
            fakelib.deep(1, 2, 60)  # SITE user_deep
        for _ in range(n):
            fakelib.deep(1, 2, 200)  # SITE user_far (past how far trlat looks)
        print("libsite %s" % lib_site(fakelib.__file__, "LIBSITE"))
        from torch.autograd.graph import _engine_run_backward
        for _ in range(n):
            _engine_run_backward(fakelib.backward, 1, 2)  # SITE user_backward
        print("bwdsite %s" % lib_site(fakelib.__file__, "LIBBWD"))
    elif mode == "inductor":  # Inductor's CachingAutotuner, called from generated code
        sys.path.insert(0, os.path.join(HERE, "site-packages"))
        import importlib.util
        import tempfile
        from torch._inductor.runtime.triton_heuristics import CachingAutotuner
        # PROG_GEN=flaggems: FlagGems' generated code instead, in its
        # default cache dir (~/.flaggems) or $FLAGGEMS_CACHE_DIR
        gen = {"flaggems": os.path.join(os.environ.get("FLAGGEMS_CACHE_DIR") or os.path.join(tempfile.mkdtemp(), ".flaggems"), "code_cache"),
               None: os.path.join(tempfile.mkdtemp(), "torchinductor_test", "ab")}[os.environ.get("PROG_GEN")]
        os.makedirs(gen, exist_ok=True)
        path = os.path.join(gen, "cabcdef.py")
        with open(path, "w") as fh:
            fh.write("triton_poi_fused_add_0 = None\n\n\ndef call(args):\n"
                     "    triton_poi_fused_add_0.run(*args, 2048, stream=0)  # GENSITE\n")
        spec = importlib.util.spec_from_file_location("cabcdef", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        mod.triton_poi_fused_add_0 = CachingAutotuner("triton_poi_fused_add_0")

        def compiled_fn(x, y):
            return mod.call([x, y])  # SITE user_compiled

        for _ in range(n):
            compiled_fn(1, 2)
        print("gensite %s" % lib_site(path, "GENSITE"))
    elif mode == "wrapper":  # what trlat put in place of run and __getitem__
        for cls, name in ((triton.JITFunction, "run"), (type(add_kernel).__mro__[1], "__getitem__")):
            w = cls.__dict__[name]
            print(name, type(w).__module__, type(w).__qualname__, getattr(w, "__wrapped__", None) is not None
                  and w.__wrapped__.__code__.co_name)
    else:
        sys.exit("unknown mode " + mode)
    sites()


main()
