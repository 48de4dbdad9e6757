"""One sandbox: its keys, limits, settings, buckets, objects, jobs and request journal."""

from __future__ import annotations

import time
from typing import Any, Optional

from .client import Client, _seg
from .errors import ApistendError


class Sandbox:
    """A sandbox of a server, as :meth:`Client.create_sandbox` or the ``apistend_sandbox``
    fixture gives it.

    >>> sandbox.set_limit("wb", "marketplace", burst=2, interval_ms=60_000)  # doctest: +SKIP
    >>> sandbox.count_requests(status=429)  # doctest: +SKIP
    0

    Every call raises :class:`ApistendError` when the server refuses it.
    """

    def __init__(self, client: Client, record: dict[str, Any]) -> None:
        self.client = client
        #: ``sbx_…``.
        self.id: str = record["id"]
        self.name: str = record["name"]
        #: The keys when it was read; :attr:`key` is the first.
        self.keys: list[str] = list(record["keys"])
        self.record = record

    def __repr__(self) -> str:
        return f"Sandbox(id={self.id!r}, name={self.name!r}, key={self.key!r})"

    @property
    def key(self) -> str:
        """The sandbox's first key: each service's own credential, or ``X-Mock-Key``."""
        return self.keys[0]

    def _path(self, rest: str = "") -> str:
        return f"/api/v1/sandboxes/{_seg(self.id)}{rest}"

    # -- where a client under test points ----------------------------------------------------

    def base_url(self, service: str) -> str:
        """The base URL a client of ``service`` (``wb``, ``ozon``, ``b24``…) is given instead
        of the real one: the server and the service's prefix (``…/wb``)."""
        for s in self.client.services():
            if s["id"] == service:
                return self.client.url + s["prefix"]
        known = ", ".join(s["id"] for s in self.client.services())
        raise ApistendError(f"no service {service!r} on this server (there are: {known})")

    def proxy_env(self) -> dict[str, str]:
        """The environment that sends a client whose hosts are fixed (``https://…wildberries.ru``)
        to this server: the server as its HTTPS proxy and the server's authority trusted by
        Python (``SSL_CERT_FILE``, ``REQUESTS_CA_BUNDLE``) and Node (``NODE_EXTRA_CA_CERTS``).

        Raises :class:`ApistendError` when the authority's file is not known (set
        ``APISTEND_CA`` for a server this process did not start).
        """
        if not self.client.ca_file:
            raise ApistendError("the server's CA file is unknown: set APISTEND_CA to its PEM")
        ca = self.client.ca_file
        return {
            "HTTPS_PROXY": self.client.url,
            "https_proxy": self.client.url,
            "SSL_CERT_FILE": ca,
            "REQUESTS_CA_BUNDLE": ca,
            "NODE_EXTRA_CA_CERTS": ca,
        }

    # -- the sandbox --------------------------------------------------------------------------

    def refresh(self) -> dict[str, Any]:
        """The sandbox as the server has it now (keys, limits, settings)."""
        self.record = self.client.call("GET", self._path())
        self.keys = list(self.record["keys"])
        return self.record

    def delete(self) -> None:
        """Deletes the sandbox, its keys, buckets, objects and journal."""
        self.client.call("DELETE", self._path())

    def issue_key(self, key: Optional[str] = None) -> str:
        """A new key (``key`` when given: a suite's fixed credential)."""
        body = {"key": key} if key is not None else {}
        issued = self.client.call("POST", self._path("/keys"), body=body)["key"]
        self.keys.append(issued)
        return issued

    def revoke_key(self, key: str) -> None:
        """Revokes ``key`` at once."""
        self.client.call("DELETE", self._path(f"/keys/{_seg(key)}"))
        if key in self.keys:
            self.keys.remove(key)

    def set_limit(self, service: str, group: str, burst: int, interval_ms: Optional[float] = None,
                  per_second: Optional[float] = None,
                  algorithm: Optional[str] = None) -> dict[str, Any]:
        """This sandbox's quota of a limit group: ``burst`` tokens, one back every
        ``interval_ms`` (or ``per_second``); ``algorithm`` ``gcra`` or ``fixed_window``. What
        is left out keeps its value (the sandbox's own quota's, else the catalog's)."""
        body: dict[str, Any] = {"burst": burst}
        if interval_ms is not None:
            body["interval_ms"] = interval_ms
        if per_second is not None:
            body["per_second"] = per_second
        if algorithm is not None:
            body["algorithm"] = algorithm
        return self.client.call("PUT", self._path(f"/limits/{_seg(service)}/{_seg(group)}"),
                                body=body)

    def remove_limit(self, service: str, group: str) -> None:
        """Removes this sandbox's own quota of a group: the plan's or the catalog's applies
        again (an :class:`ApistendError` with status 404 when it had none)."""
        self.client.call("DELETE", self._path(f"/limits/{_seg(service)}/{_seg(group)}"))

    def settings(self) -> dict[str, Any]:
        """The sandbox's settings (latency, scenario, validation, journal…)."""
        return self.client.call("GET", self._path("/settings"))

    def update_settings(self, **changes: Any) -> dict[str, Any]:
        """Changes the named settings and keeps the others: ``update_settings(latency_ms=0)``."""
        merged = {**self.settings(), **changes}
        return self.client.call("PUT", self._path("/settings"), body=merged)

    # -- buckets ------------------------------------------------------------------------------

    def buckets(self, key: Optional[str] = None, service: Optional[str] = None,
                group: Optional[str] = None) -> list[dict[str, Any]]:
        """The buckets' levels: ``key``, ``service``, ``group``, ``limit``, ``remaining``,
        ``retry_after_ms``, ``reset_after_ms`` (and ``locked_for_ms`` while locked out)."""
        query = {"key": key, "service": service, "group": group, "all": True, "limit": 1000}
        return self.client.call("GET", self._path("/buckets"), query=query)

    def bucket(self, service: str, group: str, key: Optional[str] = None) -> dict[str, Any]:
        """One bucket of ``key`` (the first key by default).

        Raises :class:`ApistendError` when there is no such bucket.
        """
        found = self.buckets(key or self.key, service, group)
        if not found:
            raise ApistendError(f"no bucket {service}/{group} for key {key or self.key}")
        return found[0]

    def reset_buckets(self, key: Optional[str] = None, service: Optional[str] = None,
                      group: Optional[str] = None) -> None:
        """Refills the buckets (all, or those named) and ends the keys' lockouts."""
        self.client.call("POST", self._path("/buckets/reset"),
                         query={"key": key, "service": service, "group": group})

    # -- objects and jobs ---------------------------------------------------------------------

    def objects(self) -> dict[str, Any]:
        """The objects the sandbox keeps, by service and collection."""
        return self.client.call("GET", self._path("/objects"))

    def seed_objects(self, objects: dict[str, Any]) -> Any:
        """Replaces the named collections with exactly ``objects``
        (``{"amocrm": {"leads": [{"id": 7, "name": "…"}]}}``)."""
        return self.client.call("PUT", self._path("/objects"), body=objects)

    def reset_objects(self) -> None:
        """Every collection starts again with its examples."""
        self.client.call("DELETE", self._path("/objects"))

    def object_counts(self) -> dict[str, Any]:
        """How many objects each collection holds."""
        return self.client.call("GET", self._path("/objects/counts"))

    def finish_jobs(self) -> Any:
        """Finishes every running job (an Ozon import, a report…) at once."""
        return self.client.call("POST", self._path("/jobs/finish"))

    # -- the request journal -----------------------------------------------------------------

    def requests(self, *, offset: int = 0, limit: int = 100, order: str = "oldest",
                 **filters: Any) -> list[dict[str, Any]]:
        """The journal's records that match ``filters`` (``operation``, ``path``, ``key``,
        ``service``, ``status``, ``refused``, ``since_ms``, ``body_path``, ``body_value``)."""
        query = {**filters, "offset": offset, "limit": limit, "order": order}
        return self.client.call("GET", self._path("/requests"), query=query)["requests"]

    def count_requests(self, **filters: Any) -> int:
        """How many requests match ``filters`` (see :meth:`requests`)."""
        return self.client.call("GET", self._path("/requests/count"), query=filters)["count"]

    def wait_for_requests(self, count: int = 1, timeout: float = 5.0, **filters: Any) -> int:
        """Blocks until ``count`` requests match ``filters`` or ``timeout`` seconds pass; how
        many match.

        Raises :class:`ApistendError` (status ``None``) when fewer arrived in time.
        """
        deadline = time.monotonic() + timeout
        while True:
            left_ms = max(0, int((deadline - time.monotonic()) * 1000))
            query = {**filters, "count": count, "timeout_ms": min(left_ms, 10_000)}
            waited = self.client.call("GET", self._path("/requests/wait"), query=query,
                                      timeout=self.client.timeout + 10)
            if waited["reached"]:
                return waited["count"]
            if time.monotonic() >= deadline:
                raise ApistendError(
                    f"{waited['count']} of {count} requests matching {filters} in {timeout} s")

    def clear_requests(self) -> None:
        """Empties the journal (every instance's)."""
        self.client.call("DELETE", self._path("/requests"))

    def conduct(self, **filters: Any) -> dict[str, Any]:
        """How each key treated the limits: ``verdict`` (``clean`` or ``violations``),
        ``reasons``, and per key and limit group the refusals, early retries, retried dead
        ends and the longest run of refusals."""
        return self.client.call("GET", self._path("/conduct"), query=filters)

    def assert_clean_conduct(self, **filters: Any) -> dict[str, Any]:
        """The conduct report, after asserting its verdict is ``clean`` (the reasons in the
        assertion's message)."""
        report = self.conduct(**filters)
        assert report["verdict"] == "clean", "; ".join(report["reasons"])
        return report
