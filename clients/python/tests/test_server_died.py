"""The private server open() started dies (killed) while a call is under
way, or before one: each call says that server exited, not "is the port
in the URL right?" of a port the caller never chose, and nothing is left
half done."""

from __future__ import annotations

import pathlib
import signal
import threading
from typing import List

import pytest

import cairnlog
from cairnlog import InvalidError, UnavailableError


def test_a_killed_private_server_is_said_so(cairn_bin: str, tmp_path: pathlib.Path) -> None:
    store = str(tmp_path / "store")
    ws = cairnlog.open(store, bin=cairn_bin)
    c = ws.client
    c.commit("s", {"n": 1})
    caught: List[BaseException] = []

    def waiting() -> None:
        try:
            c.wait("s", 1, timeout=120)  # nothing comes: the server dies first
        except BaseException as e:  # noqa: BLE001 (asserted below)
            caught.append(e)

    t = threading.Thread(target=waiting)
    t.start()
    # Killed whenever: before the wait reached it (refused) or during
    # (reset), the words are the same.
    ws._process.send_signal(signal.SIGKILL)  # type: ignore[union-attr]
    t.join(timeout=120)
    assert not t.is_alive()
    said = ("could not reach the cairn server at {}: the cairn serve that open() started has exited "
            "(killed by SIGKILL): open another workspace to go on").format(ws.url)
    assert len(caught) == 1 and isinstance(caught[0], UnavailableError), caught
    assert caught[0].message == said
    with pytest.raises(UnavailableError) as e:
        c.commit("s", {"n": 2})
    assert e.value.message == said + "; nothing was sent"
    assert e.value.code == "unreachable"
    ws.close()
    with pytest.raises(InvalidError) as closed:
        c.head("s")
    assert closed.value.code == "closed"
    # Nothing half done: the store holds the one step.
    with cairnlog.open(store, bin=cairn_bin) as again:
        assert [st["step"] for st in again.client.log("s")] == [1]
