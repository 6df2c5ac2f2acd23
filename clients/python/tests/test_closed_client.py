"""A call on a client that was closed: said at once, in words, with nothing sent."""

from __future__ import annotations

import http.server
import pathlib
import threading
from typing import Any, Callable, Iterator, List

import pytest

import cairnlog
from cairnlog import InvalidError


class _Counting(http.server.BaseHTTPRequestHandler):
    """Counts the requests it gets; answers each with cairn's 404."""

    seen: List[str] = []

    def _answer(self) -> None:
        type(self).seen.append(f"{self.command} {self.path}")
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = b'{"code":"not_found","error":"no such session"}'
        self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_DELETE = _answer

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def counting() -> Iterator[str]:
    _Counting.seen = []
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Counting)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


def _calls(c: cairnlog.Client) -> List[Callable[[], Any]]:
    return [
        lambda: c.sessions(), lambda: c.inbox(), lambda: c.head("s"), lambda: c.step("s", 1),
        lambda: c.commit("s", {"n": 1}), lambda: c.ask("s", {}, "q?"), lambda: c.reply("s", "yes"),
        lambda: c.wait("s", 0, timeout=0), lambda: c.log("s"), lambda: next(c.iter_log("s")),
        lambda: c.fork("s", "t"), lambda: c.diff("s", "t"), lambda: c.remove("s"),
    ]


def _is_closed(e: pytest.ExceptionInfo[InvalidError], url: str) -> None:
    assert e.value.status == 0 and e.value.code == "closed"
    assert e.value.message == (f"the client of {url} is closed (close() was called, or its with block ended): "
                               "nothing was sent; open another to go on")


def test_calls_after_a_private_workspace_is_closed_say_it_is_closed(cairn_bin: str, tmp_path: pathlib.Path) -> None:
    # They were UnavailableError "connection refused: is cairn serve
    # running?": the server was stopped by close(), as the user asked.
    with cairnlog.open(str(tmp_path / "store"), bin=cairn_bin) as ws:
        s = ws.session("s")
        s.commit({"n": 1})
        url = ws.url
    for call in [*_calls(ws.client), lambda: s.commit({"n": 2}), lambda: s.resume(), lambda: ws.sessions(),
                 lambda: ws.inbox(), lambda: ws.reply("s", 1), lambda: ws.diff("s", "s"), lambda: s.log()]:
        with pytest.raises(InvalidError) as e:
            call()
        _is_closed(e, url)
    assert ws.client.closed
    ws.close()  # again: no error


def test_closed_client_sends_nothing(counting: str) -> None:
    ws = cairnlog.open(url=counting)
    assert ws.session("s").resume() is None  # the server's 404: a new session
    assert len(_Counting.seen) == 1
    ws.close()
    for call in _calls(ws.client):
        with pytest.raises(InvalidError) as e:
            call()
        _is_closed(e, counting)
    assert len(_Counting.seen) == 1


def test_client_closes_and_is_a_context_manager(counting: str) -> None:
    with cairnlog.Client(counting) as c:
        assert not c.closed
        assert c.head("s") is None
    assert c.closed
    with pytest.raises(InvalidError) as e:
        c.head("s")
    _is_closed(e, counting)
    c2 = cairnlog.Client(counting)
    c2.close()
    with pytest.raises(InvalidError):
        c2.commit("s", {})
    assert len(_Counting.seen) == 1


def test_no_call_escapes_a_closed_workspace(counting: str, tmp_path: pathlib.Path) -> None:
    # export ran `cairn export` after close(); iter_log returned a
    # generator that said nothing until its first next(); wait_reply said
    # the session "asks no question"; `with` re-entered a closed client;
    # session() made a Session of a closed workspace.
    ran = tmp_path / "ran"
    fake = tmp_path / "cairn"
    fake.write_text(f"#!/bin/sh\ntouch {ran}\n")
    fake.chmod(0o755)
    ws = cairnlog.open(url=counting, store=str(tmp_path / "store"), bin=str(fake))
    s = ws.session("s")
    ws.close()
    calls: List[Callable[[], Any]] = [
        lambda: ws.export("openai-jsonl", str(tmp_path / "out.jsonl")),
        lambda: ws.client.iter_log("s"), lambda: s.iter_log(), lambda: s.wait_reply(timeout=0),
        lambda: s.wait_reply(), lambda: ws.session("t"), lambda: ws.__enter__(), lambda: ws.client.__enter__(),
        lambda: ws.client.step_after("s", 1, {"step": 2}), lambda: s.show(), lambda: s.fork("t"),
        lambda: s.diff("t"), lambda: s.ask({}, "q?"), lambda: ws.client.wait_for_reply("s", 1),
    ]
    for call in calls:
        with pytest.raises(InvalidError) as e:
            call()
        _is_closed(e, counting)
    assert not ran.exists()
    assert _Counting.seen == []


def test_an_iterator_of_a_closed_client_yields_no_more(ws: cairnlog.Workspace) -> None:
    # The rest of a page read before close() went on coming.
    s = ws.session("s")
    for n in range(3):
        s.commit({"n": n})
    it = ws.client.iter_log("s", page=10)
    assert next(it)["step"] == 3
    ws.close()
    with pytest.raises(InvalidError) as e:
        next(it)
    _is_closed(e, ws.url)


class _Holding(http.server.BaseHTTPRequestHandler):
    """Reads each request, says it arrived, and never answers."""

    arrived = threading.Event()

    def _hold(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        type(self).arrived.set()
        self.rfile.read()  # until the client goes

    do_GET = do_POST = _hold

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_close_cuts_off_a_call_under_way(method: str) -> None:
    # A wait under way in another thread went on when the client was
    # closed, until the server answered (up to a minute a poll) or the
    # client's timeout: "no answer in time", an UnavailableError.
    _Holding.arrived = threading.Event()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Holding)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{srv.server_address[1]}"
    try:
        c = cairnlog.Client(url, timeout=5)
        got: List[BaseException] = []

        def call() -> None:
            try:
                if method == "GET":
                    c.wait("s", 0, timeout=1)
                else:
                    c.commit("s", {"n": 1})
            except BaseException as e:
                got.append(e)

        t = threading.Thread(target=call)
        t.start()
        assert _Holding.arrived.wait(30)
        c.close()
        t.join(30)
        assert not t.is_alive()
        assert len(got) == 1 and isinstance(got[0], InvalidError), got
        e = got[0]
        assert e.status == 0 and e.code == "closed"
        assert e.message == (f"the client of {url} was closed while the call was under way (close() was called, "
                             "or its with block ended)" +
                             ("" if method == "GET" else
                              "; the request may have taken effect: read the session's head before trying again"))
    finally:
        srv.shutdown()
        srv.server_close()
