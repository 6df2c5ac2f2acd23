"""Exceptions for the cairn HTTP API's error answers, one class per kind."""

from __future__ import annotations

from typing import Any, Dict, List, Optional


class CairnError(Exception):
    """An error answer from the server: its HTTP status, code and message."""

    def __init__(self, status: int, code: str, message: str, body: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(f"cairn: {status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.body: Dict[str, Any] = body or {}


class ConflictError(CairnError):
    """409: another writer got the step first, an expected head did not hold,
    the session already exists, or its head does not await input."""

    @property
    def head(self) -> Optional[int]:
        """The session's head as the server saw it, when it says."""
        h = self.body.get("head")
        return int(h) if h is not None else None


class NotFoundError(CairnError):
    """404: no such session, step or route."""


class InvalidError(CairnError):
    """400: a bad session name, step number, parameter or body. Also raised,
    with status 0 and code "closed", by a call on a client that was closed
    (Client.close(), Workspace.close() or the end of its with block): the
    call was not sent."""


class LimitError(CairnError):
    """413: a request body or reply over the server's limit; 422: a stored
    state or step beyond the server's read limits (CAIRN_MAX_VALUE_BYTES, …)."""


class UnauthorizedError(CairnError):
    """401 or 403: a missing or wrong token, or a non-loopback address without one."""


class UnavailableError(CairnError):
    """503: the server's store could not be reached or did not answer, or no
    credentials were found for it (code "unavailable": the message names the
    store and what went undone: a commit's step was not written, or may have
    been); or the server is at its limit of concurrent requests (code "busy").
    Either may pass: try again later. Also raised, with status 0 and code
    "unreachable", when the server itself could not be reached or did not
    answer: the message says whether a request that writes may have taken
    effect. A commit's carries idempotency_key, the key to retry it with
    (Client.commit)."""

    idempotency_key: Optional[str] = None
    """On a commit's error: the key it was sent with; retrying with it lands the step once."""
    sent: bool = True
    """False when the request never reached the server (status 0 only)."""


class StoreRefusedError(CairnError):
    """502 with code "store_refused": the server's store answered and refused
    the request outright (credentials it does not accept, a policy that
    denies it, a bucket that does not exist, a region other than the
    bucket's; on a local store, files the server's user may not use or a
    full disk). The server works; the store will refuse the same until its
    configuration or the server's store URL changes, so retrying does not
    help. The message names the store and what went undone (a commit's step
    was not written, or may have been). A 502 with any other code (a
    proxy's, say) is a plain CairnError."""


_BY_STATUS = {409: ConflictError, 404: NotFoundError, 400: InvalidError, 413: LimitError, 422: LimitError,
              401: UnauthorizedError, 403: UnauthorizedError, 503: UnavailableError}


def error_for(status: int, body: Dict[str, Any]) -> CairnError:
    """The exception for an error answer."""
    code = str(body.get("code", "http"))
    cls = StoreRefusedError if (status, code) == (502, "store_refused") else _BY_STATUS.get(status, CairnError)
    return cls(status, code, str(body.get("error", "")), body)


class UnreadableSessionsWarning(UserWarning):
    """A listing (sessions, inbox) passed over sessions the store holds
    damaged: the others were listed. `unreadable` is the server's list of
    {session, error}; `cairn verify` names the damaged objects."""

    def __init__(self, unreadable: List[Dict[str, Any]]) -> None:
        names = ", ".join(str(u.get("session")) for u in unreadable[:5])
        more = f" and {len(unreadable) - 5} more" if len(unreadable) > 5 else ""
        super().__init__(f"cairn: {len(unreadable)} session(s) could not be read (damage in the store): {names}{more}")
        self.unreadable = unreadable
