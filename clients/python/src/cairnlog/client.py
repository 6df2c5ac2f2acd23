"""A low-level client: one method per route of the cairn HTTP API."""

from __future__ import annotations

import contextvars
import http.client
import ipaddress
import json
import math
import operator
import os
import socket
import ssl
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
import warnings
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Tuple

from .errors import CairnError, InvalidError, LimitError, NotFoundError, UnavailableError, UnreadableSessionsWarning, error_for

Step = Dict[str, Any]
"""A step as the API returns it: session, step, id, parent, origin, status,
time, kind, record and, on reads, state."""


def _listed(body: Dict[str, Any], key: str) -> List[Dict[str, Any]]:
    """body[key], warning about the sessions the server passed over as damaged."""
    if body.get("unreadable"):
        warnings.warn(UnreadableSessionsWarning(body["unreadable"]), stacklevel=3)
    return body[key]


_KEY_RULE = "1-128 printable ASCII characters, no spaces"


def _idempotency_key(key: Optional[str]) -> str:
    """key, checked as the server checks it, or a fresh one if None."""
    if key is None:
        return str(uuid.uuid4())
    if not isinstance(key, str) or not 0 < len(key) <= 128 or any(not "!" <= c <= "~" for c in key):
        raise InvalidError(400, "bad_request", f"idempotency_key {key!r}: want {_KEY_RULE}")
    return key


class _Unreadable(ValueError):
    """An answer's JSON holds a number Python does not read as written."""


def _float(text: str) -> float:
    f = float(text)
    if math.isinf(f):
        shown = text if len(text) <= 40 else text[:40] + "..."
        raise _Unreadable(f"the answer holds the number {shown}, which a Python float cannot hold (json would read it "
                          f"as {f}): store such numbers as strings")
    return f


def _decode(raw: bytes) -> Any:
    """raw's JSON. A number past a float's range (1e400, which another
    writer may store) is _Unreadable, not read as inf; so is an integer
    longer than Python reads (sys.get_int_max_str_digits()), not reported
    as an answer that is not JSON."""
    try:
        return json.loads(raw, parse_float=_float)
    except ValueError as e:
        if isinstance(e, _Unreadable) or "integer string conversion" not in str(e):
            raise
        raise _Unreadable(f"the answer holds an integer of more than {sys.get_int_max_str_digits()} digits, "
                          "longer than Python reads (raise the limit with sys.set_int_max_str_digits(), "
                          "or store such integers as strings)") from None


def _header_safe(token: Optional[str]) -> Optional[str]:
    """token, or InvalidError if an Authorization header cannot carry it:
    http.client refuses a newline with a bare ValueError, and a character
    past U+00FF with UnicodeEncodeError; one past U+007E would go out as
    Latin-1, never the server's UTF-8 token. As the TypeScript client says."""
    if token is None:
        return None
    if not isinstance(token, str):
        raise TypeError(f"token: want a str, not {token!r}")
    for c in token:
        if not (" " <= c <= "~" or c == "\t"):
            hint = " (a newline read with it from a file?)" if c in "\r\n" else ""
            raise InvalidError(400, "bad_request", f"token: it holds U+{ord(c):04X}, a character an HTTP header "
                                                   f"cannot carry: want printable ASCII{hint}")
    return token


MAX_TIMEOUT = (2**31 - 1) / 1000
"""The longest a request waits for the server (seconds, 24.8 days), whatever a longer timeout says."""

MAX_LOG_PAGE = 10_000
"""The most steps `cairn serve` reads in one log request (its limit's bound)."""

MAX_WAIT = 60
"""The longest long-poll `cairn serve` holds (seconds); wait polls again until its own timeout."""


_calling: "contextvars.ContextVar[Optional[Tuple[Client, List[socket.socket]]]]" = \
    contextvars.ContextVar("cairnlog_calling", default=None)
"""The client whose call this thread is making, and the sockets it opened:
Client.close() shuts them, cutting off a call under way in another thread."""


class _AnswerEarly:
    """A connection that, when the server stops reading its body (it sent
    its answer, 413 say, and closed), stops sending and reads the answer
    instead of failing on the broken pipe. Its socket is the calling
    client's to shut on close()."""

    def connect(self) -> None:
        super().connect()  # type: ignore[misc]
        calling = _calling.get()
        if calling is not None:
            calling[0]._opened(self.sock, calling[1])  # type: ignore[attr-defined]

    def send(self, data: Any) -> None:
        if self.sock is None and self.auto_open:  # type: ignore[attr-defined]
            # Connected here, not within the try below: a connection reset as
            # it was made (a server dying) left no socket, and getresponse
            # failed with "'NoneType' object has no attribute 'makefile'".
            self.connect()
        try:
            super().send(data)  # type: ignore[misc]
        except (BrokenPipeError, ConnectionResetError):
            # If the server did not answer, getresponse fails as before.
            if self.sock is None:  # type: ignore[attr-defined]
                raise


class _HTTPConnection(_AnswerEarly, http.client.HTTPConnection):
    pass


class _HTTPSConnection(_AnswerEarly, http.client.HTTPSConnection):
    pass


class _HTTPHandler(urllib.request.HTTPHandler):
    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_HTTPConnection, req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_HTTPSConnection, req, context=self._context)  # type: ignore[attr-defined]


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Redirects are answers, not followed: cairn serve sends none, and
    urllib would turn a commit's POST into a GET of the new URL (and send
    the bearer token there). The TypeScript client follows none either."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


# A loopback server (cairnlog.open()'s own, or cairn run's $CAIRN_URL) is
# reached directly, never through $http_proxy, which would get the bearer
# token and could not reach the server anyway; TypeScript's client uses no
# proxy at all. Other hosts go through the environment's proxies, as urlopen.
_direct = urllib.request.build_opener(urllib.request.ProxyHandler({}), _HTTPHandler, _HTTPSHandler, _NoRedirect)


def _opener(host: Optional[str]) -> urllib.request.OpenerDirector:
    """The opener for a request to host."""
    if host is not None and _loopback(host):
        return _direct
    return urllib.request.build_opener(_HTTPHandler, _HTTPSHandler, _NoRedirect)


def _loopback(host: str) -> bool:
    """True for localhost and the loopback addresses (127.0.0.0/8, ::1)."""
    if host.lower() == "localhost" or host.lower().endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _text(s: str) -> str:
    """s with each half of a surrogate pair left alone replaced by U+FFFD (whole pairs joined)."""
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        return s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _whole(n: Any, what: str) -> int:
    """n as an int, or InvalidError: a step number is never rounded (1.5 is not step 1)."""
    if isinstance(n, bool) or not hasattr(type(n), "__index__"):
        raise InvalidError(400, "bad_request", f"{what}: want a whole number, not {n!r}")
    return operator.index(n)


def _name(name: Any, what: str) -> str:
    """name, or TypeError if it is no str: a session's name is never made of another value."""
    if not isinstance(name, str):
        raise TypeError(f"{what}: want a session's name (a str), not {name!r}")
    return name


_NAME_RULE = "want 1-128 of A-Z a-z 0-9 . _ -, not starting with '.'"


def _long(s: str) -> str:
    """A long str as the server shows it: its start, and its length."""
    return f"{json.dumps(s[:32])[:-1]}…\" ({len(s)} characters)"


def _short_ref(ref: str, what: str) -> str:
    """ref (a step reference, "S" or "S@N"), or InvalidError in the server's
    words if it is longer than any: one past the server's 64 KiB of headers
    was its plain "431 Request Header Fields Too Large"."""
    name, _, num = ref.partition("@")
    if len(name) > 128:
        raise InvalidError(400, "bad_request", f"{what}: session {_long(name)}: {_NAME_RULE}")
    if len(num.lstrip("0")) > 20:
        raise InvalidError(400, "bad_request", f"{what}: bad step reference {_long(ref)}: "
                                               "step number too large (at most 18446744073709551615)")
    return ref


def _flag(v: Any, what: str) -> bool:
    """v, or TypeError if it is no bool: "false" or 0 is never taken for one."""
    if not isinstance(v, bool):
        raise TypeError(f"{what}: want True or False, not {v!r}")
    return v


def _why_not_json(value: Any, e: BaseException) -> str:
    """Why json.dumps could not encode value, in words."""
    if isinstance(e, RecursionError):
        return "nested too deep to send as JSON"
    if "Out of range float" in str(e):
        return "NaN and infinities are not JSON numbers (send null or a string instead)"
    if "Circular reference" in str(e):
        return "it holds itself (a circular reference), which JSON cannot"
    return str(e)


_CONTAINERS = (dict, list, tuple)


def _has_odd_key(value: Any) -> bool:
    """True if a dict in value has a key that is no str. value must be one
    json.dumps encoded (no cycles, not too deep)."""
    todo = [value]
    while todo:
        v = todo.pop()
        if isinstance(v, dict):
            for k, x in v.items():
                if not isinstance(k, str):
                    return True
                if isinstance(x, _CONTAINERS):
                    todo.append(x)
        elif isinstance(v, (list, tuple)):
            todo.extend(x for x in v if isinstance(x, _CONTAINERS))
    return False


def _pointer_token(key: Any) -> str:
    """key as a JSON pointer's token: its JSON name (~ and / escaped)."""
    if isinstance(key, str):
        name = key
    elif key is None or isinstance(key, (bool, int, float)):
        name = json.dumps(key)
    else:
        name = str(key)
    return "/" + name.replace("~", "~0").replace("/", "~1")


def _nodes(value: Any, path: str = "", within: Tuple[int, ...] = ()) -> Iterator[Tuple[Any, str, bool]]:
    """Every value within value, value first, each as (it, its path (a
    JSON pointer, as diff's paths), False), and before each dict member's
    value its key as (key, path, True). A container within itself is not
    walked again."""
    yield value, path, False
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, (list, tuple)):
        items = enumerate(value)
    else:
        return
    if id(value) in within:
        return
    within += (id(value),)
    for k, x in items:
        at = path + _pointer_token(k)
        if isinstance(value, dict):
            yield k, at, True
        yield from _nodes(x, at, within)


def _odd_key(value: Any) -> Optional[Tuple[Any, str]]:
    """The first dict key in value that is no str, and its path, or None."""
    return next(((k, at) for k, at, key in _nodes(value) if key and not isinstance(k, str)), None)


_JSON_SCALARS = (str, int, float, bool, type(None))


def _odd_value(value: Any) -> Optional[Tuple[Any, str]]:
    """The first value in value that json.dumps has no form for (a set,
    bytes, an object), and its path, or None."""
    return next(
        ((x, at) for x, at, key in _nodes(value) if not key and not isinstance(x, _JSON_SCALARS + (dict, list, tuple))),
        None,
    )


def _nonfinite(value: Any) -> Optional[Tuple[float, str]]:
    """The first float in value that is NaN or an infinity, and its path,
    or None."""
    return next(
        ((x, at) for x, at, key in _nodes(value) if not key and isinstance(x, float) and not math.isfinite(x)),
        None,
    )


def _refuse_odd_keys(body: Dict[str, Any], encoded: bool = True) -> None:
    """InvalidError for a dict key that is no str anywhere in the body:
    json.dumps would make it one, and {1: "a", "1": "b"} would go out as
    two "1"s, of which the server keeps one: a value lost without a word.
    encoded: json.dumps took the body (no cycles, not too deep), so a quick
    walk can rule odd keys out first."""
    for field, v in body.items():
        if not isinstance(v, _CONTAINERS) or (encoded and not _has_odd_key(v)):
            continue
        try:
            found = _odd_key(v)
        except RecursionError:
            found = None
        if found is None:
            continue
        key, at = found
        kind = type(key).__name__
        sent = ""
        if key is None or isinstance(key, (bool, int, float)):
            name = json.dumps(key)
            sent = f" (json would send it as {json.dumps(name)}, over any value under {json.dumps(name)} beside it)"
        raise InvalidError(400, "bad_request", f"{field}: the key {key!r} at {at} is {'an' if kind[0] in 'aeiou' else 'a'} "
                                               f"{kind}, not a str: JSON object keys are strings{sent}: send str keys")


def _encode(body: Dict[str, Any], names: Optional[Mapping[str, str]] = None) -> bytes:
    """The JSON text of a request body, as UTF-8 (see _encode_body). names:
    the caller's names of the body's fields, where they differ (reply's
    value, sent as "input"), for the errors to name them so."""
    if not names:
        return _encode_body(body)
    try:
        return _encode_body(body)
    except (InvalidError, TypeError):
        # Said again of the same values under the caller's names.
        _encode_body({names.get(k, k): v for k, v in body.items()})
        raise


def _encode_body(body: Dict[str, Any]) -> bytes:
    """The JSON text of a request body, as UTF-8. A value JSON cannot hold
    (NaN, infinities, a circular or too deep structure, a dict key that is
    no str) is InvalidError naming the field; a type it cannot hold (a set,
    say) stays TypeError. A str holding half a surrogate pair is sent
    escaped, as JSON.stringify does, so the server's 400 says which field
    holds it."""
    try:
        text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except TypeError as e:
        # A key json refuses (a tuple, say) is said as any other odd key;
        # a value it cannot hold stays a TypeError, naming its place as
        # the TypeScript client does.
        _refuse_odd_keys(body, encoded=False)
        for field, v in body.items():
            try:
                found = _odd_value(v)
            except RecursionError:
                found = None
            if found is not None:
                value, at = found
                kind = type(value).__name__
                hint = {"set": "a list", "frozenset": "a list", "bytes": "a str (decoded, or base64)",
                        "bytearray": "a str (decoded, or base64)"}.get(kind, "a dict, list, str, number, bool or None")
                where = f" at {at}" if at else ""
                said = f"a {kind} object" if kind in ("bytes", "bytearray") else \
                    f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"
                raise TypeError(f"{field}: the value{where} is {said}, "
                                f"which JSON has no form for ({e}): send {hint}") from None
        raise
    except (ValueError, RecursionError) as e:
        field = "request body"
        for k, v in body.items():
            try:
                json.dumps(v, allow_nan=False)
            except (ValueError, RecursionError):
                field = k
                break
            except TypeError:
                pass
        if "Out of range float" in str(e) and field in body:
            try:
                found = _nonfinite(body[field])
            except RecursionError:
                found = None
            if found is not None:
                value, at = found
                shown = "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"
                where = f" at {at}" if at else ""
                raise InvalidError(400, "bad_request", f"{field}: the value{where} is {shown}, which JSON has no number for: "
                                                       "send null or a string instead") from None
        raise InvalidError(400, "bad_request", f"{field}: {_why_not_json(body, e)}") from None
    _refuse_odd_keys(body)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(body, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode("ascii")


def _shut(s: socket.socket) -> None:
    """Shut a socket both ways: a thread blocked reading it reads its end."""
    try:
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # closed already


def _check_timeout(timeout: Any) -> None:
    """ValueError unless timeout is a number of seconds > 0 (a Client's, open()'s)."""
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < math.inf:
        raise ValueError(f"timeout {timeout!r}: want seconds > 0 (the default is 90)")


def _check_poll(poll: Any) -> None:
    """InvalidError unless poll is a number of seconds > 0 (wait_for_reply's, wait_reply's)."""
    if isinstance(poll, bool) or not isinstance(poll, (int, float)) or not 0 < poll <= math.inf:
        # poll=0 sent one wait after another, as fast as the server answered, for ever.
        raise InvalidError(400, "bad_request", f"poll: want seconds > 0, not {poll!r}")


def is_reply(record: Any) -> bool:
    """True if a step record is a human's reply ({"reply": ..., "in_reply_to": N})."""
    return isinstance(record, dict) and "reply" in record and "in_reply_to" in record


class Client:
    """A client for one cairn workspace served over HTTP."""

    commit_retries = 2
    """How often a commit or reply whose answer was lost is sent again, with
    its idempotency key, once the server has shown it honours keys (see commit)."""

    def __init__(self, url: Optional[str] = None, token: Optional[str] = None, timeout: float = 90) -> None:
        if url == "":
            # Taken for no URL: the client talked to $CAIRN_URL's server, another
            # than the caller's (an unset variable?), as TypeScript's refuses "".
            raise ValueError("url: want the server's URL, not '' (leave url out for $CAIRN_URL)")
        url = url if url is not None else os.environ.get("CAIRN_URL")
        if not url:
            raise ValueError("no server URL: pass url= or set CAIRN_URL")
        if not isinstance(url, str):
            raise TypeError(f"url: want the server's URL (a str, such as 'http://127.0.0.1:7474'), not {url!r}")
        try:
            parts = urllib.parse.urlsplit(url)
        except ValueError:
            parts = None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"server URL {url!r}: want http://HOST:PORT or https://HOST:PORT")
        _check_timeout(timeout)
        self.url = url.rstrip("/")
        self._host = parts.hostname
        # Checked up front: a token no header carries fails every call.
        self.token = _header_safe(token if token is not None else os.environ.get("CAIRN_TOKEN"))
        # At most what a request waits anyway (MAX_TIMEOUT): an int past a
        # float's range (10**400) made wait's arithmetic an OverflowError.
        self.timeout = min(timeout, MAX_TIMEOUT)
        self._keys_honoured = False
        # Set by open() for the server it started: the words for that
        # server's exit, or None while it runs.
        self._server_gone: Optional[Callable[[], Optional[str]]] = None
        self._closed = False
        self._live: "set[socket.socket]" = set()
        self._live_lock = threading.Lock()

    def close(self) -> None:
        """Close the client: each later call raises InvalidError (code
        "closed") at once, without a request. Workspace.close() (and the
        end of its with block) closes its client. Closing twice is no error.
        A call under way in another thread (a wait, say) is cut off: it
        raises the same InvalidError, saying it was under way."""
        with self._live_lock:
            self._closed = True
            live, self._live = self._live, set()
        for s in live:
            _shut(s)

    @property
    def closed(self) -> bool:
        """True once close() was called."""
        return self._closed

    def __enter__(self) -> "Client":
        self._check_open()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _opened(self, sock: socket.socket, opened: List[socket.socket]) -> None:
        """Note a socket a call of this client opened, shut at once if the client was closed meanwhile."""
        with self._live_lock:
            if not self._closed:
                self._live.add(sock)
                opened.append(sock)
                return
        _shut(sock)

    def _closed_under_way(self, method: str) -> InvalidError:
        """The error of a call cut off by close()."""
        msg = f"the client of {self.url} was closed while the call was under way (close() was called, or its with block ended)"
        if method not in ("GET", "HEAD"):
            msg += "; the request may have taken effect: read the session's head before trying again"
        return InvalidError(0, "closed", msg)

    def _check_open(self) -> None:
        """InvalidError (code "closed") if close() was called: nothing is
        sent. A closed private server would answer "connection refused",
        as if cairn serve had failed."""
        if self._closed:
            raise InvalidError(0, "closed", f"the client of {self.url} is closed (close() was called, or its with "
                                            "block ended): nothing was sent; open another to go on")

    def _call(self, method: str, path: str, body: Any = None,
              query: Optional[Mapping[str, Any]] = None, timeout: Optional[float] = None,
              headers: Optional[Mapping[str, str]] = None, names: Optional[Mapping[str, str]] = None) -> Tuple[int, Any]:
        self._check_open()
        url = self.url + path
        if query:
            # Half a surrogate pair in a str goes out as U+FFFD, as
            # URLSearchParams sends it; the server's 400 then names the parameter.
            q = {k: _text(v) if isinstance(v, str) else v for k, v in query.items() if v is not None}
            if q:
                url += "?" + urllib.parse.urlencode(q)
        data = None
        hdrs = {"Accept": "application/json", **(headers or {})}
        if body is not None:
            data = _encode(body, names)
            hdrs["Content-Type"] = "application/json"
        if self.token:
            hdrs["Authorization"] = "Bearer " + _header_safe(self.token)  # type: ignore[operator]
        req = urllib.request.Request(url, data=data, method=method, headers=hdrs)
        opened: List[socket.socket] = []
        calling = _calling.set((self, opened))
        try:
            return self._send(req, method, timeout)
        finally:
            _calling.reset(calling)
            with self._live_lock:
                self._live.difference_update(opened)

    def _send(self, req: urllib.request.Request, method: str, timeout: Optional[float]) -> Tuple[int, Any]:
        """Send req and read its answer (see _call)."""
        try:
            # At most what TypeScript's timers hold (24.8 days): past the
            # clock's range, the socket module raises OverflowError.
            with _opener(self._host).open(req, timeout=min(timeout or self.timeout, MAX_TIMEOUT)) as resp:
                raw = resp.read()
                if not raw:
                    return resp.status, None
                try:
                    return resp.status, _decode(raw)
                except _Unreadable as e:
                    raise LimitError(422, "limit", str(e)) from None
                except ValueError:
                    raise CairnError(resp.status, "http", self._foreign(resp.status, resp.reason)) from None
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                err = json.loads(raw)
            except ValueError:
                err = None
            if not (isinstance(err, dict) and isinstance(err.get("code"), str)):
                # Not cairn's {"code", "error"}: Go's plain text for what it
                # refuses before any handler (a header too large, say), or
                # another server's page at this URL.
                text = raw.decode("utf-8", "replace").strip()
                if not text or len(text) > 200 or "<" in text or "\n" in text:
                    text = self._foreign(e.code, e.reason)
                err = {"code": "http", "error": text}
            raise error_for(e.code, err) from None
        except (urllib.error.URLError, OSError, http.client.HTTPException) as e:
            if self._closed:
                # Cut off by close() in another thread: said so, not "the
                # server closed the connection", as TypeScript's says.
                raise self._closed_under_way(method) from None
            raise self._unreachable(method, e) from None

    def _foreign(self, status: int, reason: str) -> str:
        """The message for an answer that is not cairn's."""
        return (f"{status} {reason} from {self.url}, without cairn's JSON in its body: "
                "is that the URL of cairn serve?")

    def _unreachable(self, method: str, e: BaseException) -> UnavailableError:
        """The error for a request that got no answer from the server: what
        happened, in words, and whether a request that writes may have
        taken effect (it may, unless it was never sent)."""
        reason: object = getattr(e, "reason", e) if isinstance(e, urllib.error.URLError) else e
        # A TLS handshake that failed sent no request.
        never_sent = isinstance(reason, (ConnectionRefusedError, socket.gaierror, ssl.SSLError))
        if isinstance(reason, ConnectionRefusedError):
            what = "connection refused: is cairn serve running, and is the port in the URL right?"
        elif isinstance(reason, socket.gaierror):
            what = f"no such host: check the host in the URL ({reason})"
        elif isinstance(reason, ssl.SSLCertVerificationError):
            what = f"the server's certificate could not be verified ({reason.verify_message or reason})"
        elif isinstance(reason, ssl.SSLError):
            what = "the TLS handshake failed: does the server speak https? (cairn serve speaks http://)"
        elif isinstance(reason, (TimeoutError, socket.timeout)):
            what = "no answer in time"
        elif isinstance(reason, (ConnectionResetError, ConnectionAbortedError, BrokenPipeError)):
            what = "the server closed the connection before it answered (did it stop or restart?)"
        elif isinstance(reason, http.client.IncompleteRead):
            what = "the server's answer was cut off (did it stop or restart?)"
        else:
            what = str(reason) or type(reason).__name__
        # Asked only when the server may have died (a connection refused or
        # cut off): the question may wait a moment for its exit.
        dying = isinstance(reason, (ConnectionRefusedError, ConnectionResetError, ConnectionAbortedError,
                                    BrokenPipeError, http.client.IncompleteRead))
        gone = self._server_gone() if dying and self._server_gone is not None else None
        if gone:
            # A private server (open()'s) that exited: "is the port in the URL
            # right?" asked about a port the caller never chose.
            what = gone
        msg = f"could not reach the cairn server at {self.url}: {what}"
        if method not in ("GET", "HEAD"):
            msg += ("; nothing was sent" if never_sent else
                    "; the request may have taken effect: read the session's head before trying again")
        err = UnavailableError(0, "unreachable", msg)
        err.sent = not never_sent
        return err

    @staticmethod
    def _s(session: str) -> str:
        # A URL path takes no empty segment, and "." and ".." are dot
        # segments, not names: say what is wrong with the session name,
        # as the server does of any other bad name.
        # A name past 128 characters is said here too: one past the server's
        # 64 KiB of headers would be its plain "431 Request Header Fields
        # Too Large".
        _name(session, "session")
        if session in ("", ".", "..") or len(session) > 128:
            shown = json.dumps(session) if len(session) <= 128 else \
                f"{json.dumps(session[:32])[:-1]}…\" ({len(session)} characters)"
            raise InvalidError(400, "bad_request", f"session {shown}: "
                               "want 1-128 of A-Z a-z 0-9 . _ -, not starting with '.'")
        try:
            return urllib.parse.quote(session, safe="")
        except UnicodeEncodeError:
            # Half a surrogate pair, which UTF-8 cannot carry (TypeScript's
            # encodeURIComponent refuses it too).
            raise InvalidError(400, "bad_request", f"session {json.dumps(session)}: "
                               "want 1-128 of A-Z a-z 0-9 . _ -, not starting with '.'") from None

    def sessions(self, prefix: Optional[str] = None) -> List[Dict[str, Any]]:
        """Sessions with their heads: [{session, head, id, status, time}]; with a prefix, those whose name starts with it.
        Sessions the store holds damaged are left out with an UnreadableSessionsWarning."""
        if prefix is not None and not isinstance(prefix, str):
            # 5 went out as the prefix "5", and 0 listed every session.
            raise TypeError(f"prefix: want the start of session names (a str), not {prefix!r}")
        if prefix is not None and len(prefix) > 128:
            # In the server's words: one past its 64 KiB of headers was its
            # plain "431 Request Header Fields Too Large".
            raise InvalidError(400, "bad_request", f"prefix: {_long(prefix)} is not the start of a session name: {_NAME_RULE}")
        return _listed(self._call("GET", "/v1/sessions", query={"prefix": prefix or None})[1], "sessions")

    def inbox(self) -> List[Dict[str, Any]]:
        """Sessions whose head awaits a human: [{session, step, id, time, question, record}].
        Sessions the store holds damaged are left out with an UnreadableSessionsWarning."""
        return _listed(self._call("GET", "/v1/inbox")[1], "pending")

    def head(self, session: str, state: bool = True) -> Optional[Step]:
        """The session's head step (with its state unless state=False), or None if it has no steps."""
        _flag(state, "state")
        try:
            return self._call("GET", f"/v1/sessions/{self._s(session)}/head",
                              query=None if state else {"state": "false"})[1]
        except NotFoundError as e:
            if e.code != "not_found":
                raise  # another server's 404: no answer about the session
            return None

    def step(self, session: str, n: int, state: bool = True) -> Step:
        """Step n of the session (with its state unless state=False)."""
        _flag(state, "state")
        return self._call("GET", f"/v1/sessions/{self._s(session)}/steps/{_whole(n, 'step')}",
                          query=None if state else {"state": "false"})[1]

    def commit(self, session: str, state: Any, record: Any = None, status: Optional[str] = None,
               expect: Optional[int] = None, idempotency_key: Optional[str] = None) -> Step:
        """Commit state (any JSON value) as the next step. expect=N raises
        ConflictError unless the head is step N (0: the session must not exist).
        status is "running", "awaiting_input" (see ask) or "done"; None, as
        for every other optional argument, is the default: it is not sent,
        and the server's default, "running", holds.

        idempotency_key names this commit (1-128 printable ASCII characters,
        no spaces): sent again with the same key, a commit whose step already
        landed is answered with that step (its "replayed" is True) and writes
        no second one; the key on another step is a ConflictError. Default: a
        fresh key for this call. A commit whose answer is lost (a reset
        connection, a timeout, a 503) is sent again with its key, up to
        commit_retries times, once this client has seen the server store a
        key (an older server ignores the header, and a retry there could write
        the step twice); otherwise, or when the retries are spent, the
        UnavailableError carries the key (idempotency_key) to retry with. A
        worker that may be restarted passes a key of its own that it can give
        again, such as f"{job}/{turn}"."""
        body: Dict[str, Any] = {"state": state}
        # None went out as "status": null, which the API's schema (a string) has no room for.
        if status is not None:
            body["status"] = status
        if record is not None:
            body["record"] = record
        if expect is not None:
            body["expect"] = _whole(expect, "expect")
        return self._commit(session, body, idempotency_key)

    def _commit(self, session: str, body: Dict[str, Any], key: Optional[str]) -> Step:
        """POST a commit with an Idempotency-Key, sending it again while its
        answer is lost (see commit)."""
        return self._post_keyed(f"/v1/sessions/{self._s(session)}/steps", body, key, "commit")

    def _post_keyed(self, path: str, body: Dict[str, Any], key: Optional[str], what: str,
                    names: Optional[Mapping[str, str]] = None) -> Step:
        """POST a step (what: "commit" or "reply") with an Idempotency-Key,
        sending it again while its answer is lost, once the server has shown
        it honours keys (see commit)."""
        key = _idempotency_key(key)
        retries = self.commit_retries
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            # Checked before sending: None (or "2") failed with a TypeError
            # comparing it, and only once an answer was lost, in place of that error.
            raise InvalidError(400, "bad_request", f"commit_retries: want a whole number >= 0, not {retries!r}")
        attempt = 0
        while True:
            try:
                st = self._call("POST", path, body, headers={"Idempotency-Key": key}, names=names)[1]
            except UnavailableError as e:
                if e.code == "unreachable" and not getattr(e, "sent", True):
                    raise  # nothing was sent: the caller's to retry, or not
                if self._keys_honoured and attempt < retries:
                    attempt += 1
                    time.sleep(0.2 * attempt)
                    continue
                if e.code == "unreachable":
                    # Instead of "read the session's head before trying again".
                    msg = e.message.rsplit("; ", 1)[0] + (
                        f"; the {what} may have taken effect: retry it with idempotency_key={key!r}, "
                        "which answers with its step if it landed and never writes a second one")
                    e = UnavailableError(e.status, e.code, msg, e.body)
                    e.sent = True
                e.idempotency_key = key
                raise e from None
            if isinstance(st, dict) and st.get("idempotency_key") == key:
                self._keys_honoured = True
            return st

    def ask(self, session: str, state: Any, question: Any, expect: Optional[int] = None,
            idempotency_key: Optional[str] = None, **record: Any) -> Step:
        """Commit state as a step that awaits a human, with record {"question": question, ...}.
        question is any JSON value but None: a step awaiting an answer to no question
        would sit in the inbox with nothing to show."""
        if question is None:
            raise InvalidError(400, "bad_request", "question: want a question (any JSON value but null), not None")
        return self.commit(session, state, record=dict(question=question, **record),
                           status="awaiting_input", expect=expect, idempotency_key=idempotency_key)

    def wait(self, session: str, after: int, timeout: float = 30) -> Optional[Step]:
        """Long-poll: the head once it is past step `after`, or None after timeout seconds.
        The server holds one poll for at most a minute; a longer timeout polls again until it passes."""
        path, after = f"/v1/sessions/{self._s(session)}/wait", _whole(after, "after")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout >= 0:
            raise InvalidError(400, "bad_request", f"timeout: want seconds >= 0, not {timeout!r}")
        try:
            timeout = float(timeout)
        except OverflowError:
            # An int past a float's range (10**400): for ever, not OverflowError.
            timeout = math.inf
        deadline = time.monotonic() + timeout if math.isfinite(timeout) else math.inf
        while True:
            left = max(0.0, min(deadline - time.monotonic(), MAX_WAIT))
            status, body = self._call("GET", path, query={"after": after, "timeout": round(left, 3)},
                                      timeout=left + self.timeout)
            if status == 200:
                return body
            if time.monotonic() >= deadline:
                return None

    def wait_for_reply(self, session: str, question_step: int, poll: float = 30) -> Step:
        """Block until the step after question_step lands; return that step
        (the reply, unless another writer went on without one: check its
        record with is_reply), even if later steps landed meanwhile. poll is
        the timeout of each wait, seconds > 0."""
        _check_poll(poll)
        while True:
            st = self.wait(session, question_step, timeout=poll)
            if st is not None:
                return self.step_after(session, question_step, st)

    def step_after(self, session: str, n: int, head: Step) -> Step:
        """Step n+1 of the session, given a head past n that wait returned:
        the head itself, or the step read back when others landed since."""
        self._check_open()
        if head["step"] == n + 1:
            return head
        return self.step(session, n + 1)

    def reply(self, session: str, value: Any, expect: Optional[int] = None,
              idempotency_key: Optional[str] = None) -> Step:
        """Answer the question at the session's head; the answer becomes its next step.
        expect=N (the step the inbox showed) raises ConflictError unless the
        question answered is the one at step N.

        idempotency_key names this reply, as commit's names a commit: sent
        again with the same key, a reply that already landed is answered with
        its step ("replayed": True), not refused as answered; the key on
        another step is a ConflictError. Default: a fresh key for this call.
        A reply whose answer is lost is sent again with its key as a commit
        is (commit_retries); otherwise the UnavailableError carries the key
        (idempotency_key) to retry with."""
        body: Dict[str, Any] = {"input": value}
        if expect is not None:
            body["expect"] = _whole(expect, "expect")
        # A value JSON cannot hold is named as the argument, value, not as the API's "input".
        return self._post_keyed(f"/v1/sessions/{self._s(session)}/reply", body, idempotency_key, "reply",
                                names={"input": "value"})

    def log(self, session: str, limit: Optional[int] = 100, from_step: Optional[int] = None) -> List[Step]:
        """Steps newest first, following parents across forks."""
        return self._call("GET", f"/v1/sessions/{self._s(session)}/log",
                          query={"limit": None if limit is None else _whole(limit, "limit"),
                                 "from": None if from_step is None else _whole(from_step, "from")})[1]["steps"]

    def iter_log(self, session: str, page: int = 1000, from_step: Optional[int] = None) -> Iterator[Step]:
        """Every step, newest first, following parents across forks, read `page`
        steps a request: a long history is never held whole. Each next page
        starts below the last step read, in the history of `session`: below
        a fork's first step, step N of the fork is the step at N in its
        history (the origin's), also once the origin was removed.

        Its arguments are checked, and a closed client refused, at the call,
        not at the first step read; once the client is closed, the iterator
        yields no more (not even the rest of a page read before)."""
        # A generator runs nothing until its first next(): checked here,
        # iter_log(page=1.5) or a closed client's was no error until then.
        self._check_open()
        page = _whole(page, "page")
        if page < 1:
            # Said in the caller's word, not as the server's "limit".
            raise InvalidError(400, "bad_request", f"page: want 1 or more steps a request, not {page}")
        # A page past the server's most steps a request is read as pages of that many.
        page = min(page, MAX_LOG_PAGE)
        self._s(session)
        if from_step is not None:
            _whole(from_step, "from")
        return self._iter_log(session, page, from_step)

    def _iter_log(self, session: str, page: int, from_step: Optional[int]) -> Iterator[Step]:
        start = from_step
        while True:
            steps = self.log(session, limit=page, from_step=start)
            for st in steps:
                self._check_open()
                yield st
            last = steps[-1] if steps else None
            # The history ends at step 1, at a step whose older history was
            # pruned ("truncated"), or at a first step (no parent) above 1,
            # as of a name committed to again after its removal.
            if last is None or len(steps) < page or last["step"] <= 1 or last.get("truncated") \
                    or last.get("parent") is None:
                return
            start = steps[-1]["step"] - 1

    def fork(self, session: str, to: str, step: Optional[int] = None) -> Step:
        """Start session `to` from a step of `session` (default its head)."""
        body: Dict[str, Any] = {"to": _name(to, "to")}
        if step is not None:
            body["step"] = _whole(step, "step")
        return self._call("POST", f"/v1/sessions/{self._s(session)}/fork", body)[1]

    def diff(self, a: str, b: str) -> List[Dict[str, str]]:
        """Changes from step a to step b ("S" or "S@N"): [{path, kind}]."""
        for arg, what in ((a, "a"), (b, "b")):
            if not isinstance(arg, str):
                # 1 went out as "1", a session's name.
                raise TypeError(f"{what}: want a step (\"SESSION\" or \"SESSION@N\", a str), not {arg!r}")
            _short_ref(arg, what)
        return self._call("GET", "/v1/diff", query={"a": a, "b": b})[1]["changes"]

    def remove(self, session: str) -> Dict[str, Any]:
        """Remove a session, as `cairn rm`: {session, head, steps}."""
        return self._call("DELETE", f"/v1/sessions/{self._s(session)}")[1]
