"""Session names the server cannot take are InvalidError, said of the session."""

from __future__ import annotations

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
