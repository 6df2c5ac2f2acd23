"""commit_retries that is no whole number >= 0 is refused before a commit
or reply is sent, never found out only once an answer is lost."""

from __future__ import annotations

import pytest

import cairnlog
from cairnlog import InvalidError


@pytest.mark.parametrize("bad", [None, -1, 1.5, "2", True])
def test_a_bad_commit_retries_is_refused_before_sending(ws: cairnlog.Workspace, bad: object) -> None:
    # None failed with "'<' not supported between instances of 'int' and
    # 'NoneType'", and only when an answer was lost, in place of its
    # UnavailableError and idempotency key.
    c = ws.client
    c.ask("q", {}, "ok?")
    c.commit_retries = bad  # type: ignore[assignment]
    for call in (lambda: c.commit("s", {}), lambda: c.reply("q", "yes"), lambda: ws.session("s").commit({})):
        with pytest.raises(InvalidError) as e:
            call()
        assert e.value.message == f"commit_retries: want a whole number >= 0, not {bad!r}"
    assert c.head("s") is None
    assert c.head("q")["step"] == 1  # type: ignore[index]
    c.commit_retries = 0
    assert c.commit("s", {})["step"] == 1
