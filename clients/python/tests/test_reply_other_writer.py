"""Waiting for a human's reply while another worker shares the session.

Two workers, each with its own `cairn serve` over one store (two machines of a
fleet): worker A asks a question and waits; the reply lands, and worker B (a
copy the scheduler started when it thought A dead) resumes and goes on before
A's long-poll wakes. A must get the human's answer, never B's step, and its
next commit must be a conflict, never a step on top of B's.
"""

from __future__ import annotations

import pathlib
import subprocess
import threading
from typing import Callable, List

import pytest

import cairnlog
from cairnlog import Client, ConflictError, is_reply


def _two_workers(cairn_bin: str, store: str):  # type: ignore[no-untyped-def]
    return cairnlog.open(store, bin=cairn_bin), cairnlog.open(store, bin=cairn_bin)


def test_wait_reply_is_the_answer_not_a_later_step(cairn_bin: str, tmp_path: pathlib.Path) -> None:
    store = str(tmp_path / "store")
    wa, wb = _two_workers(cairn_bin, store)
    with wa, wb:
        a = wa.session("job")
        a.commit({"plan": "migrate"})
        a.ask({"plan": "migrate"}, "May I migrate?")
        assert a.head == 2
        wb.reply("job", {"approved": True})  # step 3, the human's answer
        b = wb.session("job")
        b.resume()
        b.commit({"plan": "migrate", "by": "B"}, record={"turn": "B"})  # step 4

        assert a.wait_reply(timeout=5) == {"approved": True}
        assert a.head == 3
        with pytest.raises(ConflictError) as e:
            a.commit({"plan": "migrate", "by": "A"})
        assert e.value.head == 4
        assert [st["step"] for st in a.log()] == [4, 3, 2, 1]

        # Without a timeout, through the same path.
        c = wa.session("job2")
        c.ask({"x": 1}, "Go?")
        wb.reply("job2", "yes")
        d = wb.session("job2")
        d.resume()
        d.commit({"x": 2})
        assert c.wait_reply() == "yes" and c.head == 2


def test_wait_reply_refuses_a_step_that_is_no_answer(cairn_bin: str, tmp_path: pathlib.Path) -> None:
    store = str(tmp_path / "store")
    wa, wb = _two_workers(cairn_bin, store)
    with wa, wb:
        a = wa.session("job")
        a.ask({"plan": "deploy"}, "Deploy?")
        # Worker B withdraws the question and goes on without an answer.
        subprocess.run([cairn_bin, "--store", store, "commit", "job", "-", "--withdraw", "--record", '{"turn":"B"}'],
                       input='{"plan":"skip"}', text=True, check=True, capture_output=True)
        for wait in (lambda: a.wait_reply(timeout=5), lambda: a.wait_reply()):
            with pytest.raises(ConflictError) as e:
                wait()
            assert "job@2" in e.value.message and "no reply" in e.value.message
            assert a.head == 1  # still the question: nothing was answered


def test_wait_for_reply_returns_the_step_after_the_question(cairn_bin: str, tmp_path: pathlib.Path) -> None:
    store = str(tmp_path / "store")
    wa, wb = _two_workers(cairn_bin, store)
    with wa, wb:
        c = Client(wa.url, wa.client.token)
        q = c.ask("job", {"n": 1}, "Go?", expect=0)
        wb.reply("job", {"go": True})
        b = wb.session("job")
        b.resume()
        b.commit({"n": 2})
        st = c.wait_for_reply("job", q["step"])
        assert st["step"] == q["step"] + 1
        assert st["record"] == {"reply": {"go": True}, "in_reply_to": q["step"]}


def test_reply_names_the_question_it_answers(cairn_bin: str, tmp_path: pathlib.Path) -> None:
    store = str(tmp_path / "store")
    wa, wb = _two_workers(cairn_bin, store)
    with wa, wb:
        a = wa.session("job")
        a.ask({"plan": "deploy"}, "Deploy?")
        shown = wb.inbox()[0]["step"]
        # Worker A withdraws and asks another question before the human answers.
        subprocess.run([cairn_bin, "--store", store, "commit", "job", "-", "--withdraw"],
                       input='{"plan":"drop"}', text=True, check=True, capture_output=True)
        a.head = 2
        a.ask({"plan": "drop"}, "Drop the database?")
        with pytest.raises(ConflictError) as e:
            wb.reply("job", {"approved": True}, expect=shown)
        assert "expected the question at job@1, but the head is job@3" in e.value.message
        assert [p["step"] for p in wb.inbox()] == [3]
        assert wb.reply("job", {"approved": False}, expect=3)["step"] == 4


def test_wait_reply_refuses_at_once_when_no_question_waits(cairn_bin: str, tmp_path: pathlib.Path) -> None:
    # A worker resumed after the human answered (its head the reply), or
    # one that never asked, waited for a reply that could never come: for
    # ever without a timeout, else None as though the human were still away.
    with cairnlog.open(str(tmp_path / "store"), bin=cairn_bin) as ws:
        ws.session("job").ask({"x": 1}, "Go?")
        ws.reply("job", "yes")
        fresh = ws.session("new")
        fresh.resume()
        running = ws.session("run")
        running.commit({"x": 1})
        resumed = ws.session("job")
        resumed.resume()
        assert is_reply(resumed.last["record"]) and resumed.last["record"]["reply"] == "yes"  # type: ignore[index]
        for s, said in [(resumed, "job@2 asks no question, so no reply will come: it is the reply to the question "
                                  "at job@1, its answer in last['record']['reply']"),
                        (fresh, "session new asks no question, so no reply will come: ask one first"),
                        (running, "run@1 asks no question, so no reply will come: ask one first")]:
            for timeout in (5, None):
                failed: List[BaseException] = []
                t = threading.Thread(target=lambda: failed.append(_raised(lambda: s.wait_reply(timeout=timeout))))
                t.start()
                t.join(30)
                assert not t.is_alive(), f"{s.name}: wait_reply(timeout={timeout}) still waits"
                assert isinstance(failed[0], ConflictError), (s.name, timeout, failed[0])
                assert said in str(failed[0])
        assert resumed.head == 2 and fresh.head == 0 and running.head == 1


def _raised(f: Callable[[], object]) -> BaseException:
    try:
        return AssertionError(f"returned {f()!r}")
    except BaseException as e:  # noqa: BLE001 - handed to the test
        return e
