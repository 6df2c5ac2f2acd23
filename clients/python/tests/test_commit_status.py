"""commit's status: None is the default, as for every other optional argument, and is not sent."""

from __future__ import annotations

import http.server
import json
import threading
from typing import Any, Dict, Iterator, List

import pytest

import cairnlog


class _Recording(http.server.BaseHTTPRequestHandler):
    """Keeps each commit's body; answers with a step."""

    bodies: List[Dict[str, Any]] = []

    def do_POST(self) -> None:
        type(self).bodies.append(json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0)))))
        body = json.dumps({"session": "s", "step": 1, "id": "0" * 64, "parent": None, "status": "running",
                           "time": "2026-01-01T00:00:00Z", "kind": "json", "record": None}).encode()
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def recording() -> Iterator[str]:
    _Recording.bodies = []
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recording)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


def test_status_none_is_not_sent(recording: str) -> None:
    # status=None went out as "status": null, which the API's schema (a
    # string: running, awaiting_input or done) has no room for; it landed
    # only because cairn serve reads null as absent.
    c = cairnlog.Client(recording)
    c.commit("s", {"n": 1}, status=None)
    c.commit("s", {"n": 1})
    cairnlog.Session(c, "s").commit({"n": 1}, status=None)
    c.commit("s", {"n": 1}, status="done")
    assert [b.get("status", "absent") for b in _Recording.bodies] == ["absent", "absent", "absent", "done"]


def test_status_none_is_running(ws: cairnlog.Workspace) -> None:
    s = ws.session("s")
    assert s.commit({"n": 1}, status=None)["status"] == "running"
    assert ws.client.commit("s", {"n": 2})["status"] == "running"
    assert s.resume() == {"n": 2}
    assert ws.client.commit("s", {"n": 3}, status="done")["status"] == "done"
    with pytest.raises(cairnlog.InvalidError) as e:
        ws.client.commit("s", {"n": 4}, status="finished")
    assert e.value.message == 'status "finished": want running, awaiting_input or done'
