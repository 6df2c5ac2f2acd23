"""A prefix or a step reference far longer than any session's name is
refused in the server's words for a long one, never as the server's plain
"431 Request Header Fields Too Large" (a URL past its 64 KiB of headers),
which names no argument."""

from __future__ import annotations

import pytest

import cairnlog
from cairnlog import InvalidError

RULE = "want 1-128 of A-Z a-z 0-9 . _ -, not starting with '.'"
START = '"' + "x" * 32 + '…"'


def test_a_huge_prefix_or_step_reference_is_invalid_naming_it(ws: cairnlog.Workspace) -> None:
    c = ws.client
    c.commit("x", {})
    with pytest.raises(InvalidError) as e:
        c.sessions("x" * 100_000)
    assert e.value.message == f"prefix: {START} (100000 characters) is not the start of a session name: {RULE}"
    for a, b, what in (("x" * 100_000, "x", "a"), ("x", "x" * 100_000 + "@1", "b")):
        with pytest.raises(InvalidError) as e:
            c.diff(a, b)
        assert e.value.message == f"{what}: session {START} (100000 characters): {RULE}"
    with pytest.raises(InvalidError) as e:
        ws.session("x").diff("x@" + "9" * 100_000)
    assert e.value.message == ('b: bad step reference "x@' + "9" * 30 + '…" (100002 characters): '
                               "step number too large (at most 18446744073709551615)")
    # What the server takes is sent as before.
    assert [s["session"] for s in c.sessions("x" * 128)] == []
    assert c.diff("x@" + "0" * 30 + "1", "x") == []
