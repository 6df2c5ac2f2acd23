"""wait_reply's poll is checked whether or not a timeout is given."""

from __future__ import annotations

import pytest

import cairnlog
from cairnlog import InvalidError


@pytest.mark.parametrize("bad", [0, -1, "30", None, True])
def test_a_bad_poll_is_refused_with_a_timeout_too(ws: cairnlog.Workspace, bad: object) -> None:
    # With timeout=..., poll went unused and a poll of "30" or 0 was taken without a word.
    s = ws.session("q")
    q = s.ask({}, "ok?")
    for kwargs in ({"timeout": 0}, {"timeout": 5}, {}):
        with pytest.raises(InvalidError) as e:
            s.wait_reply(poll=bad, **kwargs)  # type: ignore[arg-type]
        assert e.value.message == f"poll: want seconds > 0, not {bad!r}", kwargs
    assert s.head == q["step"]
    assert s.wait_reply(timeout=0, poll=1) is None
