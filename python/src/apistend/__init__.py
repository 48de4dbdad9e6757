"""APIStend for Python test suites: the sandbox's binary, a client of its management API, and
a pytest plugin (fixtures ``apistend``, ``apistend_sandbox``, ``apistend_proxy_env``).

>>> from apistend import Server  # doctest: +SKIP
>>> with Server() as server:  # doctest: +SKIP
...     sandbox = server.client.create_sandbox("demo")
...     sandbox.base_url("wb")
"""

from importlib.metadata import PackageNotFoundError, version

from ._binary import find_binary
from .client import Client
from .errors import ApistendError
from .sandbox import Sandbox
from .server import Server

try:
    __version__ = version("apistend")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0+unknown"

__all__ = ["ApistendError", "Client", "Sandbox", "Server", "find_binary", "__version__"]
