"""The one error the client raises: a management API call that did not succeed."""

from __future__ import annotations

from typing import Any, Optional


class ApistendError(Exception):
    """A call to the management API answered an error, or the server could not be reached.

    ``status`` is the HTTP status (``None`` when no answer came); ``problem`` the answer's
    problem details (RFC 9457: ``title``, ``detail``…) when it sent them.
    """

    def __init__(self, message: str, status: Optional[int] = None,
                 problem: Optional[dict[str, Any]] = None) -> None:
        super().__init__(message)
        self.status = status
        self.problem = problem or {}
