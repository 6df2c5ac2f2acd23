"""A store that refuses the server raises StoreRefusedError, in words."""

from __future__ import annotations

import http.server
import re
import threading
from typing import Iterator

import pytest

import cairnlog
from cairnlog import CairnError, StoreRefusedError, UnavailableError
from cairnlog.errors import error_for


class _Refuses(http.server.BaseHTTPRequestHandler):
    """An S3 server that accepts none of the credentials it is given."""

    def _refuse(self) -> None:
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        body = (b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>InvalidAccessKeyId</Code>'
                b"<Message>The Access Key Id you provided does not exist in our records.</Message></Error>")
        self.send_response(403)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    do_GET = do_PUT = do_HEAD = do_DELETE = do_POST = _refuse

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def refusing_s3() -> Iterator[int]:
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Refuses)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield srv.server_address[1]
    finally:
        srv.shutdown()
        srv.server_close()


def test_refused_store_is_a_store_refused_error(cairn_bin: str, refusing_s3: int,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # The server answers 502 code "store_refused", which was 500
    # "internal": a broken server to a client, and an invitation to retry.
    store = f"minio://127.0.0.1:{refusing_s3}/bkt/ws?secure=false&attempts=1"
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "cairn-test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "cairn-test-secret")
    with cairnlog.open(store, bin=cairn_bin) as ws:
        with pytest.raises(StoreRefusedError) as e:
            ws.session("s").commit({"n": 1})
        with pytest.raises(StoreRefusedError) as listed:
            ws.sessions()
    assert e.value.status == 502 and e.value.code == "store_refused"
    assert isinstance(e.value, CairnError) and not isinstance(e.value, UnavailableError)
    assert e.value.message.startswith(f"the store {store} refused the request: the credentials were not accepted")
    assert e.value.message.endswith("the step was not written")
    assert not re.search(r"steps/|InvalidAccessKeyId|operation error", e.value.message)
    assert listed.value.message.endswith("could not list the sessions")


def test_other_502_is_a_plain_cairn_error() -> None:
    # A proxy's 502 in front of the server says nothing about the store.
    e = error_for(502, {"code": "http", "error": "<html>Bad Gateway</html>"})
    assert type(e) is CairnError
