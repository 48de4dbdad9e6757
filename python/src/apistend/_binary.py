"""Where the ``apistend`` binary is: the one the wheel installed, unless told otherwise."""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from pathlib import Path


def find_binary() -> str:
    """The path of the ``apistend`` binary.

    ``APISTEND_BIN`` when set; else the binary this wheel installed beside the running Python
    (the virtual environment's ``bin``, whether or not it is on ``PATH``); else the first on
    ``PATH``.

    Raises ``FileNotFoundError`` naming the places looked in.
    """
    explicit = os.environ.get("APISTEND_BIN")
    if explicit:
        if not os.access(explicit, os.X_OK):
            raise FileNotFoundError(f"APISTEND_BIN={explicit} is not an executable file")
        return explicit
    name = "apistend.exe" if sys.platform == "win32" else "apistend"
    scripts = [sysconfig.get_path("scripts"), str(Path(sys.executable).parent)]
    user = sysconfig.get_path("scripts", f"{os.name}_user")
    if user:
        scripts.append(user)
    for directory in scripts:
        candidate = Path(directory) / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which(name)
    if found:
        return found
    raise FileNotFoundError(
        f"no apistend binary: APISTEND_BIN is unset, none in {', '.join(scripts)} or on PATH "
        "(pip install apistend, or cargo install --path crates/cli --locked)"
    )
