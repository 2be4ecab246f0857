"""Python programs for tests/integration/test_signals.sh, launching on the
fake driver through ctypes (no Triton): `python3 sigprog.py MODE N`. Each
launches N kernels, a few bytecodes later (where trlat's Python hook loads)
then:
  wait        prints "ready", waits until stdin ends
  raise       raises KeyboardInterrupt, uncaught
  sleep       prints "ready", sleeps (a SIGINT there: KeyboardInterrupt)
  atexit      exits normally; an atexit callback registered before the
              first CUDA call launches N more
  atexit_raise  the same, ending on an uncaught KeyboardInterrupt
  fork_raise  a child (os.fork) launches N more, ends on an uncaught
              KeyboardInterrupt; the parent says how it ended, exits 0
"""
import atexit
import ctypes
import os
import sys
import time

cuda = ctypes.CDLL("libcuda.so.1")


def launch(name, n):
    f = ctypes.c_void_p()
    cuda.cuModuleGetFunction(ctypes.byref(f), ctypes.c_void_p(0x1000), name.encode())
    for _ in range(n):
        cuda.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, None, None, None)


def main():
    mode, n = sys.argv[1], int(sys.argv[2])
    if mode.startswith("atexit"):
        atexit.register(launch, "py_atexit_kernel", n)
    launch("py_kernel", n)
    for _ in range(3):
        pass
    if mode == "wait":
        print("ready", flush=True)
        sys.stdin.read()
    elif mode in ("raise", "atexit_raise"):
        raise KeyboardInterrupt
    elif mode == "sleep":
        print("ready", flush=True)
        time.sleep(60)
    elif mode == "fork_raise":
        pid = os.fork()
        if pid == 0:
            launch("py_child_kernel", n)
            print("child %d" % os.getpid(), flush=True)
            raise KeyboardInterrupt
        _, status = os.waitpid(pid, 0)
        print("child ended: %s" % ("signal %d" % os.WTERMSIG(status) if os.WIFSIGNALED(status)
                                   else "exit %d" % os.WEXITSTATUS(status)))


main()
