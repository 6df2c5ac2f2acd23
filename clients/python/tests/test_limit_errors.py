"""A stored state beyond the server's read limits raises LimitError."""

from __future__ import annotations

import pathlib

import pytest

import cairnlog
from cairnlog import CairnError, LimitError


def test_state_over_the_read_limit_is_a_limit_error(cairn_bin: str, tmp_path: pathlib.Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # The private server reads at most 1 KiB per value; the state is 4 KiB.
    # The server answers 422 code "limit", which used to come back as a
    # bare CairnError, so `except LimitError` missed it.
    monkeypatch.setenv("CAIRN_MAX_VALUE_BYTES", "1024")
    with cairnlog.open(str(tmp_path / "s"), bin=cairn_bin) as ws:
        s = ws.session("big")
        s.commit({"text": "x" * 4096})
        with pytest.raises(LimitError) as e:
            s.resume()
        assert e.value.status == 422 and e.value.code == "limit"
        assert isinstance(e.value, CairnError)


@pytest.mark.parametrize("number, said", [
    ("1e400", "the number 1e400, which a Python float cannot hold (json would read it as inf)"),
    ("-1e400", "the number -1e400, which a Python float cannot hold (json would read it as -inf)"),
    ("1" + "0" * 5000, "an integer of more than 4300 digits, longer than Python reads"),
], ids=["1e400", "-1e400", "5001 digits"])
def test_a_number_python_cannot_read_as_written_is_a_limit_error(cairn_bin: str, tmp_path: pathlib.Path,
                                                                  number: str, said: str) -> None:
    # Another writer (the HTTP API, any JSON library) stores a state that
    # holds such a number. 1e400 read back as inf: the state changed
    # silently, and committing it again was refused (NaN and infinities are
    # no JSON numbers). An integer past sys.get_int_max_str_digits() was
    # "200 OK ... without cairn's JSON in its body: is that the URL of cairn
    # serve?". Both are now LimitError (422, code "limit"), as TypeScript's
    # for an integer a double cannot hold, and nothing is returned.
    import sys
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(4300)  # the default, whatever this interpreter was started with
    try:
        _store_and_read(cairn_bin, tmp_path, number, said)
    finally:
        sys.set_int_max_str_digits(limit)


def _store_and_read(cairn_bin: str, tmp_path: pathlib.Path, number: str, said: str) -> None:
    import json
    import urllib.request
    with cairnlog.open(str(tmp_path / "s"), bin=cairn_bin) as ws:
        ws.session("other").commit({"n": 1, "ok": 0.5})
        body = json.dumps({"state": {"n": 0, "ok": 0.5}}).replace('"n": 0', f'"n": {number}')
        req = urllib.request.Request(ws.url + "/v1/sessions/other/steps", data=body.encode(), method="POST",
                                     headers={"Authorization": "Bearer " + (ws.client.token or ""),
                                              "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as r:
            assert r.status == 201
        for read in (lambda: ws.session("other").resume(), lambda: ws.client.step("other", 2)):
            with pytest.raises(LimitError) as e:
                read()
            assert e.value.status == 422 and e.value.code == "limit"
            assert said in str(e.value)
        # The step before it reads as it was written.
        assert ws.client.step("other", 1)["state"] == {"n": 1, "ok": 0.5}
