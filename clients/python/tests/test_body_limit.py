"""A state over the server's --max-body raises LimitError, not a broken pipe."""

from __future__ import annotations

import pathlib
import re
import subprocess
from typing import Iterator

import pytest

import cairnlog
from cairnlog import LimitError


@pytest.fixture
def small_server(cairn_bin: str, tmp_path: pathlib.Path) -> Iterator[str]:
    """A `cairn serve --max-body 100000` over a fresh store: its URL."""
    p = subprocess.Popen([cairn_bin, "--store", str(tmp_path / "store"), "serve", "--listen", "127.0.0.1:0",
                          "--max-body", "100000"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert p.stdout is not None
        m = re.search(r"cairn serve: (http://\S+)", p.stdout.readline())
        assert m, "cairn serve printed no address"
        yield m.group(1)
    finally:
        p.terminate()
        p.wait(30)


@pytest.mark.parametrize("size", [200_000, 20_000_000])
def test_state_over_max_body_is_a_limit_error(small_server: str, size: int) -> None:
    # The server answers 413 as soon as it sees the Content-Length and
    # closes the connection; the client, still sending the body, used to
    # raise UnavailableError "unreachable: [Errno 32] Broken pipe; the
    # request may have taken effect" for what the server had refused.
    c = cairnlog.Client(small_server)
    with pytest.raises(LimitError) as e:
        c.commit("big", {"text": "x" * size})
    assert e.value.status == 413 and e.value.code == "too_large"
    assert "--max-body" in e.value.message
    assert c.head("big") is None
    # The client goes on working after the refusal.
    assert c.commit("big", {"text": "small"}, expect=0)["step"] == 1


def test_reply_over_the_limit_is_a_limit_error(small_server: str) -> None:
    c = cairnlog.Client(small_server)
    c.ask("q", {}, "go on?")
    with pytest.raises(LimitError):
        c.reply("q", "x" * 4_000_000)
