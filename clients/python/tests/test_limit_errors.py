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
