"""Step numbers that are not whole numbers are refused, never rounded."""

from __future__ import annotations

import pytest

import cairnlog
from cairnlog import CairnError, InvalidError


@pytest.mark.parametrize("bad", [1.5, 1.0, "1", "abc", True, None])
def test_non_integer_steps_are_invalid(ws: cairnlog.Workspace, bad: object) -> None:
    # int() used to turn 1.5 into 1 and True into 1: expect=1.5 committed
    # fenced on step 1, step(s, 1.5) read step 1, and "abc" raised a bare
    # ValueError.
    c = ws.client
    c.commit("s", {"n": 1})
    calls = [lambda: c.step("s", bad), lambda: c.commit("s", {"n": 2}, expect=bad),  # type: ignore[arg-type]
             lambda: c.fork("s", "f", step=bad), lambda: c.wait("s", bad, timeout=0.1),  # type: ignore[arg-type]
             lambda: c.reply("s", 1, expect=bad), lambda: c.log("s", from_step=bad)]  # type: ignore[arg-type]
    if bad is None:
        calls = calls[:1] + calls[3:4]  # None means "not given" where it is optional
    for call in calls:
        with pytest.raises(InvalidError) as e:
            call()
        assert isinstance(e.value, CairnError) and e.value.status == 400 and e.value.code == "bad_request"
        assert repr(bad) in e.value.message and "whole number" in e.value.message
    assert c.head("s")["step"] == 1  # type: ignore[index]
    assert c.head("f") is None


def test_integers_of_other_types_are_taken(ws: cairnlog.Workspace) -> None:
    # Anything that is an integer (has __index__, as numpy's do) is one.
    class Three:
        def __index__(self) -> int:
            return 1

    c = ws.client
    c.commit("s", {"n": 1})
    assert c.step("s", Three())["step"] == 1  # type: ignore[arg-type]
    assert c.commit("s", {"n": 2}, expect=Three())["step"] == 2  # type: ignore[arg-type]


def test_log_limit_none_is_the_servers_default(ws: cairnlog.Workspace) -> None:
    # None leaves the limit to the server, as it did before limits were checked.
    ws.client.commit("s", {"n": 1})
    assert [s["step"] for s in ws.client.log("s", limit=None)] == [1]
