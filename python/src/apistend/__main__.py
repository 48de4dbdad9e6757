"""``python -m apistend …`` runs the bundled binary with the same arguments."""

import os
import sys

from ._binary import find_binary


def main() -> None:
    binary = find_binary()
    if sys.platform == "win32":
        import subprocess

        sys.exit(subprocess.call([binary, *sys.argv[1:]]))
    os.execv(binary, [binary, *sys.argv[1:]])


if __name__ == "__main__":
    main()
