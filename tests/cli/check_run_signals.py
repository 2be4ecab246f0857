#!/usr/bin/env python3
"""Signals and `trlat run`, for tests/cli/run.sh: SIGINT, SIGTERM and SIGHUP
sent to trlat run reach its command, which it waits for; it says in one
line that a signal killed the command and ends by that signal too. Killed
itself (SIGKILL), it leaves no command running.

usage: check_run_signals.py TRLAT DIR   (DIR: where it runs, and its files)
Prints "ok NAME" or "FAIL NAME: why" per signal.
"""
import os
import signal
import subprocess
import sys
import time


def running(pid):
    """A live process, not a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(") ", 1)[1][0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def default_signals():
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)


def start(trlat, tmp):
    """trlat run with a command that sleeps; (its Popen, the command's pid)."""
    pidfile, errfile = os.path.join(tmp, "child.pid"), os.path.join(tmp, "run.err")
    if os.path.exists(pidfile):
        os.unlink(pidfile)
    with open(errfile, "w") as err:
        # The signals at their defaults, as in a shell's foreground job (a
        # job run in the background has SIGINT ignored, one under nohup
        # SIGHUP, and trlat run then leaves them ignored, as it should).
        p = subprocess.Popen([trlat, "run", "--", "sh", "-c", "echo $$ > '%s.tmp' && mv '%s.tmp' '%s'; exec sleep 30"
                              % (pidfile, pidfile, pidfile)], stderr=err, cwd=tmp, preexec_fn=default_signals)
    deadline = time.time() + 10
    while not os.path.exists(pidfile) and time.time() < deadline:
        time.sleep(0.01)
    return p, int(open(pidfile).read()), errfile


def check(trlat, tmp, sig):
    p, child, errfile = start(trlat, tmp)
    p.send_signal(sig)
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    if sig == signal.SIGKILL:  # the command is told (SIGTERM) when trlat run dies
        deadline = time.time() + 5
        while running(child) and time.time() < deadline:
            time.sleep(0.01)
    alive = running(child)
    if alive:
        os.kill(child, signal.SIGKILL)
    err = open(errfile).read()
    why = []
    if p.returncode != -sig:
        why.append("trlat run ended with %s, expected killed by %s" % (p.returncode, sig.name))
    if alive:
        why.append("its command was still running")
    line = "trlat run: sh was killed by signal %d (%s)" % (sig, signal.strsignal(sig))
    if sig != signal.SIGKILL and line not in err.splitlines():
        why.append("stderr %r has no line %r" % (err, line))
    return "; ".join(why)


def main():
    trlat, tmp = sys.argv[1:3]
    failed = False
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGKILL):
        name = "run-%s-%s" % ("killed-by" if sig == signal.SIGKILL else "forwards", sig.name)
        why = check(trlat, tmp, sig)
        print("FAIL %s: %s" % (name, why) if why else "ok %s" % name)
        failed |= bool(why)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
