"""The management API of a running sandbox server (``/api/v1``), over the standard library."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import TYPE_CHECKING, Any, Mapping, Optional

from .errors import ApistendError

if TYPE_CHECKING:
    from .sandbox import Sandbox

Query = Mapping[str, Any]


class Client:
    """A client of one server's management API.

    >>> client = Client("http://127.0.0.1:8080", admin_token="…")  # doctest: +SKIP
    >>> sandbox = client.create_sandbox("checkout tests")  # doctest: +SKIP
    >>> sandbox.base_url("wb")  # doctest: +SKIP
    'http://127.0.0.1:8080/wb'

    Every call raises :class:`ApistendError` when the server answers an error (with its
    status and problem details) or cannot be reached.
    """

    def __init__(self, url: str, admin_token: str, timeout: float = 30.0,
                 ca_file: Optional[str] = None) -> None:
        self.url = url.rstrip("/")
        self.admin_token = admin_token
        self.timeout = timeout
        #: The server's certificate authority (PEM), for clients with fixed hosts; ``None``
        #: when not known (a server this process did not start and no ``APISTEND_CA``).
        self.ca_file = ca_file
        self._services: Optional[list[dict[str, Any]]] = None

    # -- the server -------------------------------------------------------------------------

    def create_sandbox(self, name: str = "pytest", key: Optional[str] = None) -> "Sandbox":
        """A new sandbox with its first key (and ``key`` as a second, fixed one when given)."""
        from .sandbox import Sandbox

        sandbox = Sandbox(self, self.call("POST", "/api/v1/sandboxes", body={"name": name[:200]}))
        if key is not None:
            sandbox.issue_key(key)
        return sandbox

    def sandbox(self, sandbox_id: str) -> "Sandbox":
        """An existing sandbox by its id."""
        from .sandbox import Sandbox

        return Sandbox(self, self.call("GET", f"/api/v1/sandboxes/{_seg(sandbox_id)}"))

    def sandboxes(self, q: Optional[str] = None) -> list[dict[str, Any]]:
        """The sandboxes (their first 1 000), filtered by name or id."""
        return self.call("GET", "/api/v1/sandboxes", query={"q": q, "limit": 1000})

    def services(self) -> list[dict[str, Any]]:
        """The catalog's services: ``id``, ``prefix`` and limit ``groups`` (read once)."""
        if self._services is None:
            self._services = self.call("GET", "/api/v1/services")
        return self._services

    def scenarios(self) -> list[str]:
        """The names ``X-Mock-Scenario`` takes."""
        return self.call("GET", "/api/v1/scenarios")

    def healthy(self) -> bool:
        """Whether ``/healthz`` answers 200."""
        try:
            with urllib.request.urlopen(self.url + "/healthz", timeout=2) as answer:
                return answer.status == 200
        except (OSError, urllib.error.URLError):
            return False

    # -- the wire ---------------------------------------------------------------------------

    def call(self, method: str, path: str, query: Optional[Query] = None,
             body: Any = None, timeout: Optional[float] = None) -> Any:
        """One call: its JSON answer (``None`` for an empty one).

        Raises :class:`ApistendError` on an error status or no answer.
        """
        url = self.url + path
        pairs = [(k, _text(v)) for k, v in (query or {}).items() if v is not None]
        if pairs:
            url += "?" + urllib.parse.urlencode(pairs)
        data = None
        headers = {"Authorization": f"Bearer {self.admin_token}", "Accept": "application/json"}
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout or self.timeout) as answer:
                raw = answer.read()
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                problem = json.loads(raw)
            except ValueError:
                problem = {"detail": raw.decode(errors="replace")}
            detail = problem.get("detail") or problem.get("title") or ""
            raise ApistendError(f"{method} {path}: {e.code} {detail}".rstrip(), e.code,
                                problem) from None
        except (OSError, urllib.error.URLError) as e:
            raise ApistendError(f"{method} {self.url}{path}: no answer: {e}") from None
        return json.loads(raw) if raw else None


def _seg(value: str) -> str:
    return urllib.parse.quote(value, safe="")


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
