"""A URL that reaches some other HTTP server, not cairn serve (a wrong port)."""

from __future__ import annotations

import http.server
import threading
from typing import Iterator

import pytest

import cairnlog
from cairnlog import CairnError, NotFoundError


class _WebServer(http.server.BaseHTTPRequestHandler):
    """HTML pages: 200 for /v1/sessions, 404 for any other GET, 501 for POST."""

    def _page(self, status: int) -> None:
        body = f"<!DOCTYPE html><html><body><h1>{status}</h1></body></html>".encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._page(200 if self.path.startswith("/v1/sessions?") or self.path == "/v1/sessions" else 404)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self._page(501)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def web() -> Iterator[str]:
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _WebServer)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


def test_another_server_is_no_new_session(web: str) -> None:
    # resume() returned None, as for a session with no steps, because the
    # web server's 404 page was taken for cairn's; the error texts were
    # its whole HTML page, and a 200 page was a bare JSONDecodeError.
    ws = cairnlog.open(url=web)
    hint = f"from {web}, without cairn's JSON in its body: is that the URL of cairn serve?"
    with pytest.raises(NotFoundError) as e:
        ws.session("s").resume()
    assert e.value.code == "http" and e.value.message == f"404 Not Found {hint}"
    with pytest.raises(CairnError) as e2:
        ws.session("s").commit({"n": 1})
    assert e2.value.status == 501 and e2.value.message == f"501 Not Implemented {hint}"
    with pytest.raises(CairnError) as e3:
        ws.sessions()
    assert e3.value.status == 200 and e3.value.message == f"200 OK {hint}"


def test_a_head_over_the_servers_limit_says_so(ws: cairnlog.Workspace) -> None:
    # What Go's server refuses before a handler runs (a header over 64 KiB:
    # 431) cairn serve answers in the API's error shape, so the client
    # raises it with the server's words, as any other refusal.
    big = cairnlog.Client(ws.url, token="t" * 100_000)
    with pytest.raises(CairnError) as e:
        big.sessions()
    assert e.value.status == 431 and e.value.code == "too_large", e.value
    assert "request headers" in e.value.message and "64 KiB" in e.value.message, e.value


def test_a_wrong_path_prefix_is_no_new_session(ws: cairnlog.Workspace) -> None:
    # cairn serve's 404 for a path no route takes had the code not_found,
    # as for a session with no steps: resume() through a URL with a wrong
    # path prefix returned None, and the loop began the session afresh.
    c = cairnlog.Client(ws.url + "/api", token=ws.client.token)
    with pytest.raises(NotFoundError) as e:
        cairnlog.Session(c, "s").resume()
    assert e.value.code == "no_route"
    assert e.value.message == "no route GET /api/v1/sessions/s/head"
    # Through the right URL a session with no steps is still None.
    assert ws.session("s").resume() is None


class _Redirects(http.server.BaseHTTPRequestHandler):
    """Every request answered 301 to https://example.invalid/..."""

    seen: list = []

    def _redirect(self) -> None:
        self.seen.append(self.command)
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(301)
        self.send_header("Location", "http://127.0.0.1:1" + self.path)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = _redirect

    def log_message(self, *args: object) -> None:
        pass


def test_a_redirect_is_not_followed() -> None:
    # urllib followed a 301: a commit's POST became a GET of the new URL
    # (here nothing listens there: "connection refused: is cairn serve
    # running"). TypeScript's client follows none; neither does this one.
    _Redirects.seen = []
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Redirects)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{srv.server_address[1]}"
        with pytest.raises(CairnError) as e:
            cairnlog.Client(url).commit("s", {"n": 1})
        assert e.value.status == 301
        assert e.value.message == (f"301 Moved Permanently from {url}, without cairn's JSON in its body: "
                                   "is that the URL of cairn serve?")
        assert _Redirects.seen == ["POST"]
    finally:
        srv.shutdown()
        srv.server_close()
