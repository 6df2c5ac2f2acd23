"""A long history read a page at a time, across forks."""

from __future__ import annotations

import pytest

import cairnlog
from cairnlog import InvalidError, NotFoundError


def test_iter_log_pages_across_a_fork(ws: cairnlog.Workspace) -> None:
    # Below its fork point a fork's history is the fork's: log("b",
    # from_step=2) reads a@2 and what is below it in b's history, and
    # iter_log pages on under b's name, also once a is removed (it went on
    # under a's, a 404 then).
    c = ws.client
    for i in range(1, 8):
        c.commit("a", {"i": i})
    c.fork("a", "b", step=4)
    for i in range(5, 10):
        c.commit("b", {"i": i})
    want = [("b", n) for n in range(9, 3, -1)] + [("a", n) for n in range(3, 0, -1)]  # b@4 is the fork point
    for page in (1, 2, 3, 4, 9, 10, 1000):
        got = [(s["session"], s["step"]) for s in c.iter_log("b", page=page)]
        assert got == want, page
    assert [s["step"] for s in ws.session("a").iter_log(page=2)] == list(range(7, 0, -1))
    assert [(s["session"], s["step"]) for s in c.log("b", limit=3, from_step=2)] == [("a", 2), ("a", 1)]
    c.remove("a")
    for page in (1, 2, 3, 1000):
        got = [(s["session"], s["step"]) for s in c.iter_log("b", page=page)]
        assert got == want, page
    with pytest.raises(NotFoundError):
        c.log("a", limit=3, from_step=2)
    with pytest.raises(InvalidError):
        list(c.iter_log("b", page=0))


def test_iter_log_of_a_long_session_is_all_of_it(ws: cairnlog.Workspace) -> None:
    s = ws.session("long")
    s.resume()
    for i in range(1, 251):
        s.commit({"i": i})
    assert [st["step"] for st in s.iter_log(page=100)] == list(range(250, 0, -1))


def test_iter_log_ends_at_a_pruned_history(ws: cairnlog.Workspace, cairn_bin: str, tmp_path) -> None:
    # A history that ends above step 1 (pruned, or a name committed to
    # again after its removal) ended iter_log with a NotFoundError when a
    # page ended exactly at its oldest step: the next page asked for the
    # step below it. The server marks that step (truncated, or no parent)
    # and iter_log stops there.
    import subprocess
    c = ws.client
    for i in range(1, 7):
        c.commit("p", {"i": i})
    subprocess.run([cairn_bin, "--store", str(tmp_path / "store"), "prune", "p", "--keep-last", "4"],
                   check=True, capture_output=True)
    log = c.log("p")
    assert [s["step"] for s in log] == [6, 5, 4, 3]
    assert log[-1].get("truncated") is True and not any(s.get("truncated") for s in log[:-1])
    for page in (1, 2, 3, 4, 5, 1000):
        assert [s["step"] for s in c.iter_log("p", page=page)] == [6, 5, 4, 3], page
    c.remove("p")
    for i in range(1, 3):
        c.commit("p", {"again": i})
    log = c.log("p")
    assert [s["step"] for s in log][-1] > 1 and log[-1]["parent"] is None
    for page in (1, 2, 1000):
        assert [s["step"] for s in c.iter_log("p", page=page)] == [s["step"] for s in log], page
