"""The pytest plugin (entry point ``pytest11``), loaded whenever the wheel is installed.

Fixtures:

- ``apistend`` (session): a :class:`~apistend.Client` of a server shared by the whole run —
  the bundled binary started on a free port with a temporary data directory, or the server at
  ``APISTEND_URL`` (with ``APISTEND_ADMIN_TOKEN``, and ``APISTEND_CA`` for fixed-host clients);
- ``apistend_server`` (session): the :class:`~apistend.Server` started (``None`` with
  ``APISTEND_URL``);
- ``apistend_sandbox``: a fresh sandbox with a key per test, deleted after it;
- ``apistend_proxy_env``: that sandbox's server set as the HTTPS proxy, its authority trusted
  (for clients whose hosts are fixed), for the test only.

Options: ``--apistend-args="--only wb"`` (or the ini key ``apistend_args``) adds arguments to
``apistend serve``; ``APISTEND_BIN`` picks the binary.
"""

from __future__ import annotations

import os
import re
import shlex
from typing import Iterator, Optional

import pytest

from .client import Client
from .errors import ApistendError
from .sandbox import Sandbox
from .server import Server


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("apistend")
    group.addoption("--apistend-args", default=None,
                    help="arguments added to `apistend serve` (e.g. \"--only wb,ozon\")")
    parser.addini("apistend_args", "arguments added to `apistend serve`", default="")


@pytest.fixture(scope="session")
def apistend_server(pytestconfig: pytest.Config) -> Iterator[Optional[Server]]:
    """The server this run started, or ``None`` when ``APISTEND_URL`` names one."""
    if os.environ.get("APISTEND_URL"):
        yield None
        return
    args = pytestconfig.getoption("apistend_args") or pytestconfig.getini("apistend_args")
    server = Server(shlex.split(args))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def apistend(apistend_server: Optional[Server]) -> Client:
    """The management client of the run's server."""
    if apistend_server is not None:
        return apistend_server.client
    token = os.environ.get("APISTEND_ADMIN_TOKEN")
    if not token:
        raise ApistendError("APISTEND_URL is set without APISTEND_ADMIN_TOKEN")
    client = Client(os.environ["APISTEND_URL"], token, ca_file=os.environ.get("APISTEND_CA"))
    if not client.healthy():
        raise ApistendError(f"APISTEND_URL={client.url} does not answer /healthz")
    return client


@pytest.fixture
def apistend_sandbox(apistend: Client, request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    """A sandbox of its own for the test (named after it), deleted afterwards."""
    name = re.sub(r"[^\w.\-\[\]/:]+", "_", request.node.nodeid)[-200:]
    sandbox = apistend.create_sandbox(name)
    try:
        yield sandbox
    finally:
        try:
            sandbox.delete()
        except ApistendError as e:
            if e.status != 404:  # the test deleted it itself
                raise


@pytest.fixture
def apistend_proxy_env(apistend_sandbox: Sandbox,
                       monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The proxy and CA variables of :meth:`Sandbox.proxy_env`, set for this test."""
    env = apistend_sandbox.proxy_env()
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    return env
