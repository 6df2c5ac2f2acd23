"""Session names the server cannot take are InvalidError, said of the session."""

from __future__ import annotations

import re

import pytest

import cairnlog
from cairnlog import InvalidError


@pytest.mark.parametrize("name", ["", ".", "..", ".x", "a/b", "ü", "a\x00b", "a" * 129, "a b", "a" * 100_000])
def test_bad_session_names_are_invalid_in_words(ws: cairnlog.Workspace, name: str) -> None:
    # "", "." and ".." used to come back as "path /v1/sessions//steps:
    # empty, '.' and '..' segments are not taken": the route, not the name;
    # a name of 100,000 characters as the plain "431 Request Header Fields
    # Too Large".
    c = ws.client
    for call in (lambda: c.commit(name, {}), lambda: c.head(name), lambda: c.step(name, 1),
                 lambda: c.log(name), lambda: c.remove(name), lambda: ws.session(name).resume(),
                 lambda: c.fork("s", name)):
        with pytest.raises(InvalidError) as e:
            call()
        assert e.value.status == 400 and e.value.code == "bad_request"
        assert "session " in e.value.message and "want 1-128 of A-Z a-z 0-9 . _ -" in e.value.message
        assert "/v1/" not in e.value.message and len(e.value.message) < 200


def test_good_names_at_the_edges(ws: cairnlog.Workspace) -> None:
    for name in ("a" * 128, "a..b", "x.", "-", "_"):
        assert ws.client.commit(name, {"n": 1})["session"] == name


def test_half_a_surrogate_pair_in_a_name_is_invalid_in_words(ws: cairnlog.Workspace) -> None:
    # It raised UnicodeEncodeError from urllib (TypeScript: URIError).
    c = ws.client
    c.commit("a", {})
    want = "want 1-128 of A-Z a-z 0-9 . _ -, not starting with '.'"
    for call, msg in ((lambda: c.commit("a\ud800", {}), f'session "a\\ud800": {want}'),
                      (lambda: c.head("a\ud800"), f'session "a\\ud800": {want}'),
                      (lambda: c.sessions("\ud800"), f'prefix: "\ufffd" is not the start of a session name: {want}'),
                      (lambda: c.diff("a", "a\ud800"), f'b: session "a\ufffd": {want}'),
                      (lambda: c.fork("a", "b\ud800"), f'to: session "b\ufffd": {want}')):
        with pytest.raises(InvalidError) as e:
            call()
        assert e.value.message == msg


@pytest.mark.parametrize("bad", [None, 5, b"s", ["s"]])
def test_a_name_that_is_no_str_is_a_type_error(ws: cairnlog.Workspace, bad: object) -> None:
    # None was "object of type 'NoneType' has no len()"; bytes were taken
    # for their text: commit(b"s", ...) wrote session "s".
    c = ws.client
    calls = [lambda: c.commit(bad, {"a": 1}), lambda: c.head(bad), lambda: c.step(bad, 1), lambda: c.log(bad),  # type: ignore[arg-type]
             lambda: c.wait(bad, 0, timeout=0), lambda: c.ask(bad, {}, "q?"), lambda: c.reply(bad, "yes"),  # type: ignore[arg-type]
             lambda: c.remove(bad), lambda: c.fork(bad, "copy"), lambda: ws.session(bad).resume()]  # type: ignore[arg-type]
    for call in calls:
        with pytest.raises(TypeError, match=re.escape(f"session: want a session's name (a str), not {bad!r}")):
            call()
    c.commit("a", {"a": 1})
    with pytest.raises(TypeError, match=re.escape(f"to: want a session's name (a str), not {bad!r}")):
        c.fork("a", bad)  # type: ignore[arg-type]
    assert [s["session"] for s in c.sessions()] == ["a"]
