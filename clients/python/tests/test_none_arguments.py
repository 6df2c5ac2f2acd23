"""None for an optional argument is left out, as for every other one (and
as the TypeScript client takes null); a value is named by the argument's
Python name, never by the API's field; "" is no URL."""

from __future__ import annotations

import pathlib

import pytest

import cairnlog
from cairnlog import InvalidError


def test_export_takes_none_for_sessions_and_args(ws: cairnlog.Workspace, tmp_path: pathlib.Path) -> None:
    # Each was "TypeError: 'NoneType' object is not iterable", where None is
    # every other optional argument's default.
    ws.client.commit("chat", {"task": "greet"}, record={"messages": [{"role": "user", "content": "hi"},
                                                                     {"role": "assistant", "content": "hello"}]})
    want = tmp_path / "all.jsonl"
    ws.export("openai-jsonl", str(want))
    for kwargs in ({"sessions": None}, {"args": None}, {"sessions": None, "args": None}):
        out = tmp_path / "none.jsonl"
        ws.export("openai-jsonl", str(out), **kwargs)
        assert out.read_text() == want.read_text(), kwargs
        out.unlink()
    assert "hello" in want.read_text()


def test_reply_names_its_value_argument_not_the_api_field(ws: cairnlog.Workspace) -> None:
    # It said "input: ...", the API's name, of reply's argument value.
    c = ws.client
    q = c.ask("s", {}, "ok?")
    with pytest.raises(InvalidError) as e:
        c.reply("s", {"cost": float("nan")})
    assert e.value.message == "value: the value at /cost is NaN, which JSON has no number for: send null or a string instead"
    with pytest.raises(TypeError) as t:
        ws.reply("s", [{1, 2}])
    assert str(t.value).startswith("value: the value at /0 is a set, which JSON has no form for ("), str(t.value)
    with pytest.raises(InvalidError) as k:
        c.reply("s", {1: "a"})
    assert k.value.message.startswith("value: the key 1 at /1 is an int, not a str: "), k.value.message
    assert c.head("s")["step"] == q["step"]  # type: ignore[index]
    # None is JSON's null: stored, as TypeScript's reply(s, null).
    assert c.reply("s", None)["record"] == {"reply": None, "in_reply_to": q["step"]}


def test_an_empty_url_is_refused_not_taken_for_cairn_url(ws: cairnlog.Workspace,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # url="" talked to $CAIRN_URL's server, another than the caller's (an
    # unset variable?), as store="" is refused for the same reason.
    monkeypatch.setenv("CAIRN_URL", ws.url)
    for make in (lambda: cairnlog.Client(""), lambda: cairnlog.open(url="")):
        with pytest.raises(ValueError) as e:
            make()
        assert str(e.value) == "url: want the server's URL, not '' (leave url out for $CAIRN_URL)"
    # None is left out: $CAIRN_URL.
    with cairnlog.Client(None, token=ws.client.token) as c:
        assert c.url == ws.url
