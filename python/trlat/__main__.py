"""`python -m trlat ...` and the installed `trlat` command: the trlat CLI
that the wheel carries (trlat/_bin/trlat, with libtrlat.so beside it), run
with the same arguments."""
import os
import sys


def cli_path():
    """The CLI of this install: the wheel's, else a source tree's build/trlat."""
    here = os.path.dirname(os.path.abspath(__file__))
    for p in (os.path.join(here, "_bin", "trlat"), os.path.join(here, "..", "..", "build", "trlat")):
        if os.access(p, os.X_OK):
            return os.path.realpath(p)
    return None


def main():
    cli = cli_path()
    if cli is None:
        sys.exit("trlat: the trlat program is not in this install (expected %s)" %
                 os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bin", "trlat"))
    os.execv(cli, [cli] + sys.argv[1:])


if __name__ == "__main__":
    main()
