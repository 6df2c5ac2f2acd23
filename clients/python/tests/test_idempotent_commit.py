"""A commit (or a reply) whose answer is lost lands once when sent again with its idempotency key."""

from __future__ import annotations

import socket
import threading
import urllib.parse
from typing import Iterator, List

import pytest

import cairnlog
from cairnlog import ConflictError, InvalidError, UnavailableError


class LosingProxy:
    """Forwards each request to the server on its own connection and
    relays the answer, except for the next `lose` commits (POSTs to
    .../steps, or to whatever `match` names, such as b"/reply "): their
    answers are read from the server, then the client's connection is
    closed, as a dropped connection would leave them."""

    def __init__(self, upstream: str) -> None:
        u = urllib.parse.urlsplit(upstream)
        self.upstream = (u.hostname, u.port)
        self.lose = 0
        self.match = b"/steps "
        self.commits: List[bytes] = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._relay, args=(conn,), daemon=True).start()

    def _relay(self, conn: socket.socket) -> None:
        with conn:
            req = b""
            while b"\r\n\r\n" not in req:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                req += chunk
            head, _, body = req.partition(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            while len(body) < length:
                body += conn.recv(65536)
            head = b"\r\n".join(line for line in head.split(b"\r\n") if not line.lower().startswith(b"connection:"))
            lost = False
            if head.startswith(b"POST ") and self.match in head.split(b"\r\n")[0]:
                self.commits.append(head)
                if self.lose > 0:
                    self.lose, lost = self.lose - 1, True
            with socket.create_connection(self.upstream) as up:
                up.sendall(head + b"\r\nConnection: close\r\n\r\n" + body)
                answer = b""
                while chunk := up.recv(65536):
                    answer += chunk
            if not lost:
                conn.sendall(answer)

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def proxy(ws: cairnlog.Workspace) -> Iterator[LosingProxy]:
    p = LosingProxy(ws.client.url)
    yield p
    p.close()


def test_lost_answer_is_sent_again_and_lands_once(ws: cairnlog.Workspace, proxy: LosingProxy) -> None:
    client = cairnlog.Client(proxy.url, ws.client.token)
    client.commit("s", {"n": 1})  # the server echoes the key: it honours keys
    proxy.lose = 1
    st = client.commit("s", {"n": 2}, record={"turn": 2}, expect=1)
    assert st["step"] == 2 and st["replayed"] is True
    assert len(proxy.commits) == 3  # the lost one, sent again with the same key
    keys = [h for c in proxy.commits[1:] for h in c.split(b"\r\n") if h.lower().startswith(b"idempotency-key:")]
    assert len(keys) == 2 and keys[0] == keys[1]
    assert ws.client.head("s", state=False)["step"] == 2


def test_first_commit_lost_carries_its_key_to_retry_with(ws: cairnlog.Workspace, proxy: LosingProxy) -> None:
    # A fresh client has not seen the server honour keys: it does not send
    # the commit again by itself (an older server would write it twice),
    # and the error says which key to retry with.
    client = cairnlog.Client(proxy.url, ws.client.token)
    proxy.lose = 1
    with pytest.raises(UnavailableError) as e:
        client.commit("s", {"n": 1}, expect=0)
    key = e.value.idempotency_key
    assert key and f"idempotency_key={key!r}" in e.value.message
    assert len(proxy.commits) == 1
    st = client.commit("s", {"n": 1}, expect=0, idempotency_key=key)
    assert st["step"] == 1 and st["replayed"] is True
    assert ws.client.head("s", state=False)["step"] == 1


def test_session_retry_with_its_key_after_a_restart(ws: cairnlog.Workspace, proxy: LosingProxy) -> None:
    # An ephemeral worker: its commit landed, it was killed before it
    # heard, and its successor, which resumes from the head it last knew,
    # commits again with the worker's own key for the step.
    s = cairnlog.Session(cairnlog.Client(proxy.url, ws.client.token), "job")
    s.commit({"turn": 1}, idempotency_key="job/turn-1")
    proxy.lose = 2
    with pytest.raises(UnavailableError):
        s.client.commit_retries = 1
        s.commit({"turn": 2}, idempotency_key="job/turn-2")
    st = s.commit({"turn": 2}, idempotency_key="job/turn-2")
    assert st["step"] == 2 and st["replayed"] is True and s.head == 2
    assert ws.client.head("job", state=False)["step"] == 2


def test_key_used_for_another_step_is_a_conflict(ws: cairnlog.Workspace) -> None:
    c = ws.client
    c.commit("s", {"n": 1}, idempotency_key="k1")
    with pytest.raises(ConflictError) as e:
        c.commit("s", {"n": 2}, idempotency_key="k1")
    assert 'idempotency key "k1" was already used for step 1' in e.value.message
    assert c.head("s", state=False)["step"] == 1


@pytest.mark.parametrize("key", ["", "two words", "k" * 129, "é"])
def test_bad_key_is_refused_before_sending(key: str) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        client = cairnlog.Client(f"http://127.0.0.1:{sock.getsockname()[1]}")
        with pytest.raises(InvalidError) as e:
            client.commit("s", {}, idempotency_key=key)
    assert "printable ASCII" in e.value.message


def test_lost_reply_answer_is_sent_again_and_lands_once(ws: cairnlog.Workspace, proxy: LosingProxy) -> None:
    # A human's approval landed and its answer was lost: sent again with
    # its key, it is answered with the reply it wrote, not refused as
    # "does not await input".
    client = cairnlog.Client(proxy.url, ws.client.token)
    client.commit("s", {"plan": "deploy"})  # the server echoes the key: it honours keys
    client.ask("s", {"plan": "deploy"}, "Deploy?", expect=1)
    proxy.match, proxy.lose = b"/reply ", 1
    st = client.reply("s", {"approved": True}, expect=2)
    assert st["step"] == 3 and st["replayed"] is True and st["record"] == {"reply": {"approved": True}, "in_reply_to": 2}
    assert len(proxy.commits) == 4  # two commits; the lost reply, sent again with the same key
    keys = [h for c in proxy.commits[2:] for h in c.split(b"\r\n") if h.lower().startswith(b"idempotency-key:")]
    assert len(keys) == 2 and keys[0] == keys[1]
    assert ws.client.head("s", state=False)["step"] == 3


def test_first_reply_lost_carries_its_key_to_retry_with(ws: cairnlog.Workspace, proxy: LosingProxy) -> None:
    ws.client.commit("s", {"plan": "deploy"})
    ws.client.ask("s", {"plan": "deploy"}, "Deploy?", expect=1)
    client = cairnlog.Client(proxy.url, ws.client.token)
    proxy.match, proxy.lose = b"/reply ", 1
    with pytest.raises(UnavailableError) as e:
        client.reply("s", {"approved": True})
    key = e.value.idempotency_key
    assert key and f"idempotency_key={key!r}" in e.value.message and "the reply may have taken effect" in e.value.message
    st = ws.reply("s", {"approved": True}, idempotency_key=key)
    assert st["step"] == 3 and st["replayed"] is True
    with pytest.raises(ConflictError):
        ws.reply("s", {"approved": False}, idempotency_key=key)  # the key on another answer
    with pytest.raises(ConflictError):
        ws.reply("s", {"approved": True})  # a fresh key: the question was answered
    assert ws.client.head("s", state=False)["step"] == 3
