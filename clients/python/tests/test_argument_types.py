"""Arguments of the wrong type are a TypeError naming the argument, never another value."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest

import cairnlog


@pytest.mark.parametrize("prefix", [5, 0, b"a", ["a"]])
def test_sessions_prefix_that_is_no_str(ws: cairnlog.Workspace, prefix: Any) -> None:
    # sessions(5) listed the sessions named 5…, and sessions(0) every session.
    ws.session("5x").commit({})
    ws.session("y").commit({})
    for call in (ws.client.sessions, ws.sessions):
        with pytest.raises(TypeError) as e:
            call(prefix)
        assert str(e.value) == f"prefix: want the start of session names (a str), not {prefix!r}"
    assert [s["session"] for s in ws.sessions("5")] == ["5x"]
    assert len(ws.sessions()) == len(ws.sessions(None)) == len(ws.sessions("")) == 2


@pytest.mark.parametrize("a,b", [(1, "s"), ("s", 2), (None, "s"), ("s", b"s")])
def test_diff_steps_that_are_no_str(ws: cairnlog.Workspace, a: Any, b: Any) -> None:
    # diff(1, 2) diffed the sessions named "1" and "2".
    ws.session("1").commit({"n": 1})
    ws.session("2").commit({"n": 2})
    ws.session("s").commit({"n": 3})
    bad, what = (a, "a") if not isinstance(a, str) else (b, "b")
    with pytest.raises(TypeError) as e:
        ws.diff(a, b)
    assert str(e.value) == f'{what}: want a step ("SESSION" or "SESSION@N", a str), not {bad!r}'
    assert ws.diff("1", "2") == [{"path": "/n", "kind": "changed"}]


@pytest.mark.parametrize("state", ["false", 0, None, 1])
def test_state_flag_that_is_no_bool(ws: cairnlog.Workspace, state: Any) -> None:
    # head(s, state="false") read the state (a non-empty str is true).
    ws.session("s").commit({"n": 1})
    for call in (lambda: ws.client.head("s", state=state), lambda: ws.client.step("s", 1, state=state)):
        with pytest.raises(TypeError) as e:
            call()
        assert str(e.value) == f"state: want True or False, not {state!r}"
    assert "state" not in ws.client.head("s", state=False)  # type: ignore[operator]
    assert ws.client.step("s", 1, state=True)["state"] == {"n": 1}


@pytest.mark.parametrize("what", ["sessions", "args"])
def test_export_globs_as_one_str(ws: cairnlog.Workspace, tmp_path: pathlib.Path, what: str) -> None:
    # sessions="s*" went out as --session s --session '*': every session.
    ws.session("s1").commit({})
    with pytest.raises(TypeError) as e:
        ws.export("openai-jsonl", str(tmp_path / "out.jsonl"), **{what: "s*"})
    assert str(e.value) == f"{what}: want a list of str, not the str 's*': pass ['s*']"
    assert not (tmp_path / "out.jsonl").exists()
