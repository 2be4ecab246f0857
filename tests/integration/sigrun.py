"""Runs a command, signals it once it is ready, says how it ended (for
tests/integration/test_signals.sh):

    sigrun.py [--core] [--ready-file PATH] [--gap S] [--survive S] SIGNALS -- CMD...

SIGNALS: names sent in turn, comma-separated (TERM,INT), --gap seconds
apart; "-" sends none. The command is ready when it prints a line
"ready [PID]" (PID: the process to signal, else the command itself), or
with --ready-file once a file matching PATH (a glob) exists. --survive S: S seconds after the
signals, say whether it still runs, then close its stdin. --core: core
dumps allowed (up to the hard limit). Prints the command's stdout, then
"threads NAMES" (its threads' names when it was ready), "alive 0|1"
(--survive), "status signal=NAME core=0|1" or "status exit=N", and
"elapsed S" (from the first signal to the end)."""
import glob
import os
import resource
import signal
import subprocess
import sys
import time


def main():
    args = sys.argv[1:]
    core = ready_file = None
    gap, survive = 0.05, None
    while args[0].startswith("--"):
        opt = args.pop(0)
        if opt == "--core":
            core = True
        elif opt == "--ready-file":
            ready_file = args.pop(0)
        elif opt == "--gap":
            gap = float(args.pop(0))
        elif opt == "--survive":
            survive = float(args.pop(0))
    sigs = [] if args[0] == "-" else [getattr(signal, "SIG" + s) for s in args[0].split(",")]
    cmd = args[args.index("--") + 1:]

    def pre():
        if core:  # as far as the hard limit allows
            hard = resource.getrlimit(resource.RLIMIT_CORE)[1]
            resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))

    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, preexec_fn=pre)
    target = p.pid
    if ready_file:
        while not glob.glob(ready_file) and p.poll() is None:
            time.sleep(0.001)
    else:
        for line in p.stdout:
            sys.stdout.write(line.decode())
            if line.startswith(b"ready"):
                f = line.split()
                target = int(f[1]) if len(f) > 1 else p.pid
                break
    try:
        names = sorted(open("/proc/%d/task/%s/comm" % (target, t)).read().strip()
                       for t in os.listdir("/proc/%d/task" % target))
    except OSError:
        names = []
    t0 = time.monotonic()
    for i, s in enumerate(sigs):
        if i:
            time.sleep(gap)
        os.kill(target, s)
    if survive is not None:
        time.sleep(survive)
        try:
            alive = os.waitpid(target, os.WNOHANG)[0] == 0 if target == p.pid else os.kill(target, 0) is None
        except OSError:
            alive = False
        print("alive %d" % alive)
        p.stdin.close()
    out = p.stdout.read().decode()
    sys.stdout.write(out)
    _, status = os.waitpid(p.pid, 0)
    elapsed = time.monotonic() - t0
    print("threads %s" % " ".join(names))
    if os.WIFSIGNALED(status):
        print("status signal=%s core=%d" % (signal.Signals(os.WTERMSIG(status)).name[3:], os.WCOREDUMP(status)))
    else:
        print("status exit=%d" % os.WEXITSTATUS(status))
    print("elapsed %.2f" % elapsed)


main()
