"""wait(timeout=T) waits T seconds, though the server holds one poll for less."""

from __future__ import annotations

import contextlib
import http.server
import re
import threading
import time
import urllib.parse
from typing import Iterator, List, Type

import pytest

import cairnlog
from cairnlog import InvalidError


class _CappedPolls(http.server.BaseHTTPRequestHandler):
    """A server whose long-polls end after at most 0.3 s with 204, as
    `cairn serve` ends them after at most 60 s."""

    timeouts: List[float] = []

    def hold(self, timeout: float) -> float:
        """How long to hold the poll that asked for timeout seconds."""
        return min(timeout, 0.3)

    def do_GET(self) -> None:
        t = float(urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)["timeout"][0])
        self.timeouts.append(t)
        time.sleep(self.hold(t))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def _serving(handler: Type[_CappedPolls]) -> Iterator[str]:
    """Serve handler on a loopback port, its timeouts emptied; yield its URL."""
    handler.timeouts = []
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


@pytest.fixture
def capped() -> Iterator[str]:
    with _serving(_CappedPolls) as url:
        yield url


def test_wait_polls_again_until_its_timeout(capped: str) -> None:
    # wait(timeout=1.2) used to return None when the first poll ended,
    # after the server's cap: Session.wait_reply(timeout=3600) gave up
    # after a minute.
    c = cairnlog.Client(capped)
    t0 = time.monotonic()
    assert c.wait("s", 1, timeout=1.2) is None
    took = time.monotonic() - t0
    assert took >= 1.2, took
    # At least one poll after the first, whose 0.3 s left most of 1.2 s;
    # how many depends on how fast the machine answers, so only that.
    assert len(_CappedPolls.timeouts) >= 2
    assert _CappedPolls.timeouts[0] == 1.2 and all(t <= 1.2 for t in _CappedPolls.timeouts)


class _EarlyFirstPoll(_CappedPolls):
    """A server that ends its first long-poll after 0.3 s and holds every
    later one for the whole timeout asked."""

    def hold(self, timeout: float) -> float:
        return min(timeout, 0.3) if len(self.timeouts) == 1 else timeout


def test_wait_timeout_bounds_the_whole_wait() -> None:
    # Each poll after the first asks for the time left, not the whole
    # timeout again: wait(timeout=1) returns after about 1 s, not 1.3 s.
    with _serving(_EarlyFirstPoll) as url:
        t0 = time.monotonic()
        assert cairnlog.Client(url).wait("s", 1, timeout=1.0) is None
        took = time.monotonic() - t0
    assert took >= 1.0, took
    # The first poll held 0.3 s of the 1 s, so the second may ask for
    # at most 0.7 s (less, as the machine's own time passes too); the
    # whole timeout again would be 1.0. Said without a lower bound, which
    # would measure the machine's speed.
    assert _EarlyFirstPoll.timeouts[0] == 1.0, _EarlyFirstPoll.timeouts
    assert len(_EarlyFirstPoll.timeouts) >= 2 and 0 < _EarlyFirstPoll.timeouts[1] <= 0.7, _EarlyFirstPoll.timeouts


def test_wait_zero_asks_once(capped: str) -> None:
    assert cairnlog.Client(capped).wait("s", 1, timeout=0) is None
    assert _CappedPolls.timeouts == [0]


def test_a_huge_wait_timeout_asks_the_server_for_at_most_a_minute(capped: str) -> None:
    # 1e12 s used to overflow the socket timeout (OverflowError).
    errors: List[BaseException] = []

    def wait() -> None:
        try:
            cairnlog.Client(capped).wait("s", 1, timeout=1e12)
        except cairnlog.UnavailableError:
            pass  # the server stopped under it
        except BaseException as e:
            errors.append(e)

    threading.Thread(target=wait, daemon=True).start()
    deadline = time.monotonic() + 30  # not a measure of speed
    while not _CappedPolls.timeouts and not errors and time.monotonic() < deadline:
        time.sleep(0.01)
    assert errors == []
    assert _CappedPolls.timeouts and _CappedPolls.timeouts[0] == 60, _CappedPolls.timeouts


def test_a_negative_wait_timeout_is_invalid(capped: str) -> None:
    with pytest.raises(InvalidError, match="timeout: want seconds >= 0"):
        cairnlog.Client(capped).wait("s", 1, timeout=-1)


@pytest.mark.parametrize("timeout", [None, "5", True])
def test_a_wait_timeout_that_is_no_number_is_invalid_in_words(capped: str, timeout: object) -> None:
    # None and "5" were "TypeError: '>=' not supported between instances of
    # 'NoneType' and 'int'"; True waited a second. TypeScript's is the same
    # InvalidError, as a negative timeout's is.
    with pytest.raises(InvalidError, match=re.escape(f"timeout: want seconds >= 0, not {timeout!r}")):
        cairnlog.Client(capped).wait("s", 1, timeout=timeout)  # type: ignore[arg-type]
