"""A store the server cannot reach raises UnavailableError, in words."""

from __future__ import annotations

import re
import socket

import pytest

import cairnlog
from cairnlog import CairnError, UnavailableError


def test_unreachable_store_is_an_unavailable_error(cairn_bin: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Nothing listens at the store's port. The server answers 503 code
    # "unavailable", which used to be 500 "internal" with the SDK's text
    # and a store key ("get steps/s/head: … dial tcp …").
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    store = f"minio://127.0.0.1:{port}/bkt/ws?secure=false&attempts=1"
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "cairn-test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "cairn-test-secret")
    with cairnlog.open(store, bin=cairn_bin) as ws:
        with pytest.raises(UnavailableError) as e:
            ws.session("s").commit({"n": 1})
    assert e.value.status == 503 and e.value.code == "unavailable"
    assert isinstance(e.value, CairnError)
    assert e.value.message.startswith(f"the store {store} could not be reached (connection refused")
    assert e.value.message.endswith("the step was not written")
    assert not re.search(r"steps/|dial tcp|operation error", e.value.message)


def test_unreachable_server_is_an_unavailable_error() -> None:
    # Nothing listens at the server's port: the client used to raise
    # urllib's URLError ("<urlopen error [Errno 111] Connection refused>"),
    # none of the client's error classes.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = cairnlog.Client(f"http://127.0.0.1:{port}")
    with pytest.raises(UnavailableError) as e:
        client.commit("s", {"n": 1})
    assert e.value.status == 0 and e.value.code == "unreachable"
    assert e.value.message == (f"could not reach the cairn server at http://127.0.0.1:{port}: connection refused: "
                               "is cairn serve running, and is the port in the URL right?; nothing was sent")
    with pytest.raises(UnavailableError):
        client.sessions()


def test_server_that_never_answers_may_have_written() -> None:
    # A server that accepts the connection and never answers: the commit
    # may have reached it, and the error says so.
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)
        client = cairnlog.Client(f"http://127.0.0.1:{srv.getsockname()[1]}", timeout=0.5)
        with pytest.raises(UnavailableError) as e:
            client.commit("s", {"n": 1})
    assert e.value.code == "unreachable"
    key = e.value.idempotency_key
    assert key and e.value.message.endswith(f"no answer in time; the commit may have taken effect: retry it with "
                                            f"idempotency_key={key!r}, which answers with its step if it landed "
                                            "and never writes a second one")


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_server_that_hangs_up_says_so_in_words(method: str) -> None:
    # A server that reads the request and closes the connection (killed
    # mid-call): the message was http.client's "Remote end closed
    # connection without response"; TypeScript's was "ECONNRESET".
    import threading

    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)

        def hang_up() -> None:
            conn, _ = srv.accept()
            conn.recv(65536)
            conn.close()

        threading.Thread(target=hang_up, daemon=True).start()
        client = cairnlog.Client(f"http://127.0.0.1:{srv.getsockname()[1]}", timeout=10)
        with pytest.raises(UnavailableError) as e:
            client.commit("s", {"n": 1}) if method == "POST" else client.sessions()
    assert e.value.code == "unreachable"
    want = "the server closed the connection before it answered (did it stop or restart?)"
    if method == "POST":
        want += (f"; the commit may have taken effect: retry it with idempotency_key={e.value.idempotency_key!r}, "
                 "which answers with its step if it landed and never writes a second one")
    assert e.value.message.endswith(want)


def test_https_to_plain_http_is_said_and_nothing_was_sent(ws: cairnlog.Workspace) -> None:
    # https:// to cairn serve (plain HTTP): "[SSL: WRONG_VERSION_NUMBER]
    # wrong version number (_ssl.c:992); the request may have taken
    # effect", though a failed handshake sends no request.
    url = ws.url.replace("http://", "https://")
    with pytest.raises(UnavailableError) as e:
        cairnlog.Client(url, token=ws.client.token).commit("s", {"n": 1})
    assert e.value.message == (f"could not reach the cairn server at {url}: the TLS handshake failed: does the "
                               "server speak https? (cairn serve speaks http://); nothing was sent")
    assert ws.client.head("s") is None
