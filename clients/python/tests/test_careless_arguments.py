"""Arguments of the wrong type or value, as a careless caller passes them:
refused at once in the caller's words, with nothing sent, no server
started and no cairn export run."""

from __future__ import annotations

import math
import pathlib

import pytest

import cairnlog
from cairnlog import InvalidError
from test_closed_client import _Counting, counting  # noqa: F401 (a fixture)

NOT_RUN = "/nonexistent/cairn-not-run"


@pytest.mark.parametrize("kwargs,err,msg", [
    ({"store": 5}, TypeError, "store: want a store URL or directory (a str), not 5"),
    ({"store": b"/tmp/s"}, TypeError, "store: want a store URL or directory (a str), not b'/tmp/s'"),
    ({"bin": 5}, TypeError, "bin: want the path of the cairn binary (a str), not 5"),
    ({"store": ""}, ValueError, "store: want a store URL or directory, not '' (leave store out for $CAIRN_STORE or cairn's default)"),
    ({"start_timeout": 0}, ValueError, "start_timeout 0: want seconds > 0 (the default is 30)"),
    ({"start_timeout": -1}, ValueError, "start_timeout -1: want seconds > 0 (the default is 30)"),
    ({"start_timeout": math.nan}, ValueError, "start_timeout nan: want seconds > 0 (the default is 30)"),
    ({"start_timeout": "30"}, ValueError, "start_timeout '30': want seconds > 0 (the default is 30)"),
])
def test_open_refuses_a_wrong_store_bin_or_start_timeout_before_starting(kwargs: dict, err: type, msg: str) -> None:
    # store=5 failed in subprocess's words ("expected str, bytes or
    # os.PathLike object, not int"); a start_timeout of 0, -1 or nan
    # started a server, then stopped it: "no address printed within -1 s";
    # store="" served $CAIRN_STORE or cairn's default store.
    kwargs = {"bin": NOT_RUN, **kwargs}
    with pytest.raises(err) as e:
        cairnlog.open(**kwargs)
    assert str(e.value) == msg


def test_export_refuses_arguments_of_the_wrong_type_or_value(counting: str, tmp_path: pathlib.Path) -> None:
    # format=None, out=None and sessions=[1] failed in subprocess's words;
    # out="-" had cairn export write to the standard output that export
    # captures and drops: the trajectories were lost, and export returned.
    ran = tmp_path / "ran"
    fake = tmp_path / "cairn"
    fake.write_text(f"#!/bin/sh\ntouch {ran}\n")
    fake.chmod(0o755)
    ws = cairnlog.open(url=counting, store=str(tmp_path / "store"), bin=str(fake))
    out = str(tmp_path / "out.jsonl")
    for call, err, msg in [
        (lambda: ws.export(None, out), TypeError, "format: want an export format (a str, such as 'openai-jsonl'), not None"),
        (lambda: ws.export("openai-jsonl", None), TypeError, "out: want the path of the file to write (a str), not None"),
        (lambda: ws.export("openai-jsonl", tmp_path), TypeError,
         f"out: want the path of the file to write (a str), not {tmp_path!r}"),
        (lambda: ws.export("openai-jsonl", out, sessions=["a", 1]), TypeError, "sessions: want a list of str, not one holding 1"),
        (lambda: ws.export("openai-jsonl", out, args=[None]), TypeError, "args: want a list of str, not one holding None"),
        (lambda: ws.export("openai-jsonl", "-"), InvalidError,
         "cairn: 400 bad_request: out: want the path of the file to write, not '-' (export writes a file; "
         "standard output is not returned)"),
        (lambda: ws.export("openai-jsonl", ""), InvalidError,
         "cairn: 400 bad_request: out: want the path of the file to write, not '' (export writes a file; "
         "standard output is not returned)"),
    ]:
        with pytest.raises(err) as e:
            call()
        assert str(e.value) == msg
    assert not ran.exists()
    assert _Counting.seen == []


def test_iter_log_says_a_page_under_1_in_its_own_word(counting: str) -> None:
    # It was the server's 'limit "0": want 1 to 10000': the caller said page.
    c = cairnlog.Client(counting)
    for page in (0, -1):
        with pytest.raises(InvalidError) as e:
            c.iter_log("s", page=page)
        assert e.value.message == f"page: want 1 or more steps a request, not {page}"
    assert _Counting.seen == []
    # A page past the server's bound is read as pages of 10,000 (here: one 404).
    with pytest.raises(cairnlog.NotFoundError):
        next(c.iter_log("s", page=2**64))
    assert _Counting.seen == ["GET /v1/sessions/s/log?limit=10000"]


@pytest.mark.parametrize("poll", [0, -1, 0.0, math.nan, "30", None, True])
def test_waiting_for_a_reply_refuses_a_poll_that_is_no_time(counting: str, poll: object) -> None:
    # poll=0 sent one wait after another, as fast as the server answered,
    # for as long as no reply came.
    ws = cairnlog.open(url=counting)
    s = ws.session("s")
    s.last, s.head = {"step": 1, "status": "awaiting_input", "record": {"question": "q?"}}, 1
    for call in (lambda: ws.client.wait_for_reply("s", 1, poll=poll), lambda: s.wait_reply(poll=poll)):  # type: ignore[arg-type]
        with pytest.raises(InvalidError) as e:
            call()
        assert e.value.message == f"poll: want seconds > 0, not {poll!r}"
    assert _Counting.seen == []


def test_a_wait_longer_than_a_float_holds_waits(counting: str) -> None:
    # wait(timeout=10**400) failed with OverflowError "int too large to
    # convert to float"; 2**64 and inf waited, a minute a poll.
    c = cairnlog.Client(counting)
    for timeout in (10**400, 2**64):
        with pytest.raises(cairnlog.NotFoundError):  # the counting server's 404
            c.wait("s", 0, timeout=timeout)
    assert _Counting.seen == ["GET /v1/sessions/s/wait?after=0&timeout=60"] * 2


@pytest.mark.parametrize("timeout", [0, -1, "90", None])
def test_open_refuses_a_timeout_before_it_starts_a_server(tmp_path: pathlib.Path, timeout: object) -> None:
    # open(store, timeout=0) started cairn serve, then the Client refused
    # the timeout: the server ran on until the program ended, with no
    # workspace to stop it.
    ran = tmp_path / "ran"
    fake = tmp_path / "cairn"
    fake.write_text(f"#!/bin/sh\ntouch {ran}\necho 'cairn serve: http://127.0.0.1:9'\nexec cat >/dev/null\n")
    fake.chmod(0o755)
    with pytest.raises(ValueError) as e:
        cairnlog.open(str(tmp_path / "store"), bin=str(fake), timeout=timeout)  # type: ignore[arg-type]
    assert str(e.value) == f"timeout {timeout!r}: want seconds > 0 (the default is 90)"
    assert not ran.exists()


def test_export_passes_sessions_given_as_an_iterator(counting: str, tmp_path: pathlib.Path) -> None:
    # The check that each session glob is a str reads the sessions: an
    # iterator must still reach cairn export whole, not spent by the check.
    argv = tmp_path / "argv"
    fake = tmp_path / "cairn"
    fake.write_text(f"#!/bin/sh\necho \"$@\" > {argv}\n")
    fake.chmod(0o755)
    ws = cairnlog.open(url=counting, store=str(tmp_path / "store"), bin=str(fake))
    ws.export("openai-jsonl", str(tmp_path / "out.jsonl"), sessions=iter(["a*", "b"]), args=(x for x in ["--label", "l"]))
    assert argv.read_text().split() == ["--store", str(tmp_path / "store"), "export", "--format", "openai-jsonl",
                                        "--out", str(tmp_path / "out.jsonl"), "--session", "a*", "--session", "b",
                                        "--label", "l"]


def test_a_client_timeout_longer_than_a_float_holds_waits(counting: str) -> None:
    # Client(url, timeout=10**400) took it, then wait() failed with
    # OverflowError "int too large to convert to float".
    c = cairnlog.Client(counting, timeout=10**400)
    with pytest.raises(cairnlog.NotFoundError):  # the counting server's 404
        c.wait("s", 0, timeout=0)
    assert _Counting.seen == ["GET /v1/sessions/s/wait?after=0&timeout=0.0"]
