"""ask() without a question."""

from __future__ import annotations

import pytest

import cairnlog
from cairnlog import InvalidError


def test_ask_refuses_no_question(ws: cairnlog.Workspace) -> None:
    # ask(question=None) committed {"question": null}: a step awaiting an
    # answer to nothing, listed in the inbox with no question to show.
    s = ws.session("s")
    for call in (lambda: ws.client.ask("s", {}, None), lambda: ws.client.ask("s", {}, question=None),
                 lambda: s.ask({}, None)):
        with pytest.raises(InvalidError) as e:
            call()
        assert e.value.message == "question: want a question (any JSON value but null), not None"
    assert ws.client.head("s") is None
    assert ws.inbox() == []
    for q in ("q?", 0, False, "", {"text": "q?"}):
        st = ws.client.ask(f"s{len(str(q))}", {}, q)
        assert st["record"] == {"question": q}
