"""``apistend serve`` as a child process: started on a free port, stopped with its data."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Optional, Sequence

from ._binary import find_binary
from .client import Client
from .errors import ApistendError

_LISTENING = re.compile(r"APIStend sandbox listening on (\S+)")


class Server:
    """A sandbox server this process runs, on a free loopback port with a data directory of
    its own (removed on :meth:`stop`), or a context manager that does both.

    >>> with Server() as server:  # doctest: +SKIP
    ...     sandbox = server.client.create_sandbox("demo")

    ``args`` are added to ``apistend serve`` (``["--only", "wb,ozon"]``).
    """

    def __init__(self, args: Sequence[str] = (), binary: Optional[str] = None,
                 data_dir: Optional[str] = None, start_timeout: float = 30.0) -> None:
        self.binary = binary or find_binary()
        self.args = list(args)
        self.start_timeout = start_timeout
        self._own_dir = data_dir is None
        self.data_dir = Path(data_dir or tempfile.mkdtemp(prefix="apistend-"))
        self.admin_token = "pytest-" + secrets.token_hex(16)
        #: The server's output (its log), for a failure's message.
        self.log_path = self.data_dir / "apistend.log"
        self.url = ""
        self._process: Optional[subprocess.Popen[bytes]] = None
        self._client: Optional[Client] = None

    @property
    def client(self) -> Client:
        """The management client of this server."""
        if self._client is None:
            raise ApistendError("the server is not started")
        return self._client

    def start(self) -> "Server":
        """Starts the server and waits for its first answer.

        Raises :class:`ApistendError` with the server's output when it does not start in
        ``start_timeout`` seconds.
        """
        command = [self.binary, "serve", "--addr", "127.0.0.1:0", "--data", str(self.data_dir),
                   "--admin-token", self.admin_token, *self.args]
        env = {**os.environ, "RUST_LOG": os.environ.get("RUST_LOG", "warn")}
        # The output goes to a file, not a pipe nobody reads: a chatty server never blocks.
        with open(self.log_path, "wb") as log:
            self._process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL, env=env)
        deadline = time.monotonic() + self.start_timeout
        while not self.url:
            found = _LISTENING.search(self.log())
            if found:
                self.url = found.group(1)
            elif self._process.poll() is not None:
                raise ApistendError(f"apistend serve exited ({self._process.returncode}):\n"
                                    + self.log())
            elif time.monotonic() > deadline:
                self.stop()
                raise ApistendError(f"apistend serve did not start in {self.start_timeout} s:\n"
                                    + self.log())
            else:
                time.sleep(0.01)
        ca = self.data_dir / "apistend-ca.pem"
        self._client = Client(self.url, self.admin_token, ca_file=str(ca))
        while not self._client.healthy():
            if time.monotonic() > deadline:
                self.stop()
                raise ApistendError(f"{self.url}/healthz did not answer:\n" + self.log())
            time.sleep(0.01)
        return self

    def log(self) -> str:
        """What the server has written so far."""
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def stop(self) -> None:
        """Stops the server (SIGTERM, then SIGKILL after 5 s) and removes its own data
        directory."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._own_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self) -> "Server":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
