"""A connection reset as it is made (a server dying, say) is an
UnavailableError in words, never an AttributeError from inside http.client."""

from __future__ import annotations

import socket
from typing import Any

import pytest

import cairnlog
from cairnlog import UnavailableError


def test_a_connection_reset_while_connecting_is_unreachable(ws: cairnlog.Workspace,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    c = cairnlog.Client(ws.url, ws.client.token)
    c.commit("s", {"n": 1})

    def reset(*args: Any, **kwargs: Any) -> socket.socket:
        raise ConnectionResetError(104, "Connection reset by peer")

    # As a server that dies while the connection is made resets it.
    monkeypatch.setattr(socket, "create_connection", reset)
    for call, effect in ((lambda: c.head("s"), ""),
                         (lambda: c.wait("s", 1, timeout=5), ""),
                         (lambda: c.remove("s"), "; the request may have taken effect: read the session's head before trying again")):
        with pytest.raises(UnavailableError) as e:
            call()
        assert e.value.code == "unreachable"
        assert e.value.message == (f"could not reach the cairn server at {ws.url}: the server closed the connection "
                                   f"before it answered (did it stop or restart?){effect}")
    with pytest.raises(UnavailableError) as e:
        c.commit("s", {"n": 2}, idempotency_key="k-1")
    assert e.value.idempotency_key == "k-1"
    monkeypatch.undo()
    assert [st["step"] for st in c.log("s")] == [1]
