"""cairnlog against a real `cairn serve` started in local mode."""

from __future__ import annotations

import json
import math
import pathlib
import subprocess
import threading

import pytest

import cairnlog
from cairnlog import CairnError, Client, ConflictError, InvalidError, LimitError, NotFoundError, UnauthorizedError


def test_session_tracks_its_head_and_fences(ws: cairnlog.Workspace) -> None:
    s = ws.session("agent")
    assert s.resume() is None and s.head == 0
    s.commit({"messages": ["a"]}, record={"turn": 1})
    s.commit({"messages": ["a", "b"]}, record={"turn": 2})
    assert s.head == 2

    # A second writer that resumed at the same head loses the next step.
    other = ws.session("agent")
    assert other.resume() == {"messages": ["a", "b"]}
    s.commit({"messages": ["a", "b", "c"]})
    with pytest.raises(ConflictError) as e:
        other.commit({"messages": ["a", "b", "x"]})
    assert e.value.status == 409 and e.value.head == 3
    assert ws.session("agent").resume() == {"messages": ["a", "b", "c"]}


def test_ask_and_wait_reply(ws: cairnlog.Workspace) -> None:
    s = ws.session("hitl")
    s.commit({"plan": "delete logs"})
    q = s.ask({"plan": "delete logs"}, "May I?", cost=3)
    assert q["status"] == "awaiting_input" and s.head == 2
    assert s.wait_reply(timeout=0.1) is None
    inbox = ws.inbox()
    assert [(p["session"], p["question"], p["record"]["cost"]) for p in inbox] == [("hitl", "May I?", 3)]
    # The human answers from another client while this one waits.
    threading.Timer(0.2, lambda: Client(ws.url, ws.client.token).reply("hitl", {"approved": True})).start()
    assert s.wait_reply() == {"approved": True}
    assert s.head == 3 and ws.inbox() == []
    with pytest.raises(ConflictError):
        ws.reply("hitl", "again")


def test_fork_log_show_diff(ws: cairnlog.Workspace) -> None:
    s = ws.session("main")
    for i in range(3):
        s.commit({"n": i, "items": list(range(i))})
    alt = s.fork("alt", step=2)
    assert alt.head == 2 and alt.last is not None and alt.last["origin"] == "main@2"
    alt.commit({"n": 9, "items": []})
    assert [st["step"] for st in s.log()] == [3, 2, 1]
    assert [(st["session"], st["step"]) for st in alt.log()] == [("alt", 3), ("alt", 2), ("main", 1)]
    assert s.show()["state"] == {"n": 2, "items": [0, 1]}
    assert s.show(1)["state"] == {"n": 0, "items": []}
    assert ws.session("none").show() is None
    assert {c["path"] for c in s.diff("alt")} == {"/n", "/items/0", "/items/1"}
    assert {x["session"] for x in ws.sessions()} == {"main", "alt"}
    assert [x["session"] for x in ws.sessions(prefix="al")] == ["alt"]


def test_errors_are_classes(ws: cairnlog.Workspace, cairn_bin: str) -> None:
    c = ws.client
    with pytest.raises(NotFoundError):
        c.step("nothing", 1)
    with pytest.raises(InvalidError) as e:
        c.commit("bad name", {})
    assert e.value.code == "bad_request"
    c.ask("big", {}, "q")
    with pytest.raises(LimitError):
        c.reply("big", "x" * (2 << 20))
    with pytest.raises(UnauthorizedError) as u:
        Client(ws.url, token="nope").sessions()
    assert u.value.status == 401 and isinstance(u.value, CairnError)
    assert c.remove("big")["steps"] == 1
    with pytest.raises(NotFoundError):
        c.remove("big")


def test_local_mode_stops_its_server(cairn_bin: str, tmp_path: pathlib.Path) -> None:
    with cairnlog.open(str(tmp_path / "s"), bin=cairn_bin) as w:
        w.session("x").commit({"a": 1})
        url, p = w.url, w._process
        assert p is not None and p.poll() is None
    assert p.poll() is not None
    with pytest.raises(Exception):
        Client(url, timeout=2).sessions()
    # The state outlives the server: a new local server reads it back.
    with cairnlog.open(str(tmp_path / "s"), bin=cairn_bin) as w:
        assert w.session("x").resume() == {"a": 1}


def test_export(ws: cairnlog.Workspace, tmp_path: pathlib.Path) -> None:
    s = ws.session("chat")
    # Records follow the step-record convention (docs/records.md): the messages added this step.
    s.commit({"turn": 1}, record={"messages": [{"role": "user", "content": "hi"}]})
    s.commit({"turn": 2}, record={"messages": [{"role": "assistant", "content": "hello"}]}, status="done")
    out = tmp_path / "chat.jsonl"
    ws.export("openai-jsonl", str(out), sessions=["chat"])
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines and lines[0]["messages"][-1] == {"role": "assistant", "content": "hello"}
    with pytest.raises(RuntimeError):
        ws.export("no-such-format", str(out))


def test_remote_mode_uses_the_url(ws: cairnlog.Workspace) -> None:
    w = cairnlog.open(url=ws.url, token=ws.client.token)
    w.session("r").commit([1, 2])
    assert ws.session("r").resume() == [1, 2]
    w.close()  # no server of its own: nothing to stop
    assert ws.session("r").resume() == [1, 2]


def test_types_check_with_the_py_typed_marker() -> None:
    pkg = pathlib.Path(cairnlog.__file__).parent
    assert (pkg / "py.typed").exists()


@pytest.mark.parametrize("url", ["not a url", "ftp://x", "http://[::1", "http://", "localhost:7474"])
def test_bad_server_url_is_said_in_the_constructor(url: str) -> None:
    # As the TypeScript client does: a URL that cannot name a server is
    # refused at once, naming it, not at the first call as urllib's
    # "unknown url type: 'not a url/v1/sessions/s/head'".
    with pytest.raises(ValueError) as e:
        Client(url)
    assert repr(url) in str(e.value) and "http://HOST:PORT" in str(e.value)


@pytest.mark.parametrize("url", [7474, b"http://127.0.0.1:7474", ["http://127.0.0.1:7474"]])
def test_a_server_url_that_is_no_str_is_a_type_error(url: object) -> None:
    # A port number or bytes given as the URL was urlsplit's AttributeError
    # ("'int' object has no attribute 'decode'") or a ValueError naming
    # b'...', not the TypeError of every other argument that is no str.
    with pytest.raises(TypeError) as e:
        Client(url)  # type: ignore[arg-type]
    assert str(e.value) == f"url: want the server's URL (a str, such as 'http://127.0.0.1:7474'), not {url!r}"
    with pytest.raises(TypeError):
        cairnlog.open(url=url)  # type: ignore[arg-type]


def test_listings_go_past_a_damaged_session(cairn_bin: str, tmp_path: pathlib.Path) -> None:
    # One session whose head the store holds damaged: the listings keep the
    # others and warn, naming it (the server answers 200 with "unreadable").
    store = tmp_path / "store"
    with cairnlog.open(str(store), bin=cairn_bin) as ws:
        for name in ("a", "d"):
            s = ws.session(name)
            s.commit({"i": 1})
            s.commit({"i": 2})
        ws.session("q").ask({"i": 1}, question="go on?")
    step = store / "steps" / "d" / "00000000000000000002"
    b = bytearray(step.read_bytes())
    b[len(b) // 2] ^= 0x40
    step.write_bytes(bytes(b))
    with cairnlog.open(str(store), bin=cairn_bin) as ws:
        with pytest.warns(cairnlog.UnreadableSessionsWarning, match="could not be read.*: d") as w:
            names = [x["session"] for x in ws.sessions()]
        assert names == ["a", "q"]
        assert w[0].message.unreadable[0]["session"] == "d"  # type: ignore[union-attr]
        with pytest.warns(cairnlog.UnreadableSessionsWarning, match="d"):
            assert [p["session"] for p in ws.inbox()] == ["q"]


@pytest.mark.parametrize("timeout", [0, -1, math.nan, math.inf, "10", True])
def test_a_timeout_that_is_no_positive_number_is_refused(timeout: object) -> None:
    # Client(timeout=-1) failed only at its first request, with the socket
    # module's "Timeout value must be non-negative"; 0 made every request
    # non-blocking, and so fail.
    with pytest.raises(ValueError, match=r"want seconds > 0 \(the default is 90\)"):
        cairnlog.Client("http://127.0.0.1:7474", timeout=timeout)  # type: ignore[arg-type]


@pytest.mark.parametrize("timeout", [3e6, 1e300])
def test_a_timeout_of_weeks_or_more_is_honoured(cairn_bin: str, tmp_path: pathlib.Path, timeout: float) -> None:
    # The constructor took timeout=1e300, and every call then raised
    # OverflowError ("timestamp too large to convert to C _PyTime_t"), no
    # CairnError. The TypeScript client waits as long for the same timeout.
    with cairnlog.open(str(tmp_path / "store"), bin=cairn_bin, timeout=timeout) as ws:
        assert ws.client.commit("s", {"a": 1})["step"] == 1
        assert ws.client.wait("s", 1, timeout=0) is None
