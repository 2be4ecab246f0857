"""Programs for tests/integration/test_flush.sh, launching on the fake
driver through ctypes: `python3 flushprog.py MODE N`.
  exit        launch N, sleep 2.5 s, os._exit(0)
  kill        launch N, sleep 2.5 s, SIGKILL itself
  api         trlat.flush() after N launches, N more, then a normal exit;
              prints the paths trlat gave
  fork        launch N, then a child (os.fork) launches N more, sleeps
              2.5 s, os._exit(0); the parent waits and exits normally
  noload      the API without trlat in the process
"""
import ctypes
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import trlat  # noqa: E402


def launch(name, n):
    cuda = ctypes.CDLL("libcuda.so.1")
    f = ctypes.c_void_p()
    cuda.cuModuleGetFunction(ctypes.byref(f), ctypes.c_void_p(0x1000), name.encode())
    for _ in range(n):
        cuda.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, None, None, None)


mode, n = sys.argv[1], int(sys.argv[2])
if mode == "noload":
    try:
        trlat.pause()
    except trlat.NotLoaded as e:
        print("NotLoaded:", e)
elif mode in ("exit", "kill"):
    launch("flush_kernel", n)
    time.sleep(2.5)
    sys.stdout.flush()
    if mode == "exit":
        os._exit(0)
    os.kill(os.getpid(), signal.SIGKILL)
elif mode == "api":
    print("before:", trlat.report_path(), trlat.flush())
    launch("api_kernel", n)
    p = trlat.flush()
    print("flushed:", p, p == trlat.report_path())
    with trlat.paused():
        launch("paused_kernel", n)
    launch("api_kernel", n)
    print("fastpath:", trlat.fastpath(True))
elif mode == "fork":
    launch("parent_kernel", n)
    pid = os.fork()
    if pid == 0:
        launch("child_kernel", n)
        time.sleep(2.5)
        os._exit(0)
    os.waitpid(pid, 0)
