"""open() with a cairn binary older than --stop-on-stdin-eof."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

import cairnlog

from test_private_server import SRC, _alive, _gone


def _older(cairn_bin: str, tmp_path: pathlib.Path) -> str:
    """A cairn that refuses --stop-on-stdin-eof in the words of cairn before
    it (exit 2; `cairn serve --frob` says the same of --frob), and is the
    real one otherwise."""
    b = tmp_path / "older-cairn"
    b.write_text("#!/bin/sh\n"
                 'for a in "$@"; do\n'
                 '  if [ "$a" = --stop-on-stdin-eof ]; then\n'
                 '    echo "cairn serve: unknown flag --stop-on-stdin-eof (see cairn help serve)" >&2\n'
                 "    exit 2\n"
                 "  fi\n"
                 "done\n"
                 f"exec '{cairn_bin}' \"$@\"\n")
    b.chmod(0o755)
    return str(b)


def test_an_older_cairn_is_started_without_the_flag_and_stopped_by_close(cairn_bin: str,
                                                                        tmp_path: pathlib.Path) -> None:
    # open() failed: "start cairn serve: cairn serve: unknown flag
    # --stop-on-stdin-eof (see cairn help serve)", with a cairn that serves
    # this client well but for that flag.
    older = _older(cairn_bin, tmp_path)
    ws = cairnlog.open(str(tmp_path / "s"), bin=older)
    try:
        assert ws.session("x").commit({"a": 1})["step"] == 1
        pid = ws._process.pid  # type: ignore[union-attr]
    finally:
        ws.close()
    assert _gone(pid), f"cairn serve (pid {pid}) still runs after close()"


def test_an_older_cairn_stops_when_python_exits_without_close(cairn_bin: str, tmp_path: pathlib.Path) -> None:
    # Without the flag the server cannot see this process die of SIGKILL,
    # but it stops at the interpreter's exit, as before the flag.
    older = _older(cairn_bin, tmp_path)
    script = (
        "import cairnlog\n"
        f"ws = cairnlog.open({str(tmp_path / 's')!r}, bin={older!r})\n"
        "ws.session('x').commit({'a': 1})\n"
        "print(ws._process.pid, flush=True)\n"
    )
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, PYTHONPATH=str(SRC)))
    assert r.returncode == 0, r.stderr
    pid = int(r.stdout.split()[-1])
    try:
        assert _gone(pid), f"cairn serve (pid {pid}) still runs after the Python process exited"
    finally:
        if _alive(pid):
            os.kill(pid, 9)


def test_a_cairn_that_fails_otherwise_is_not_started_again(tmp_path: pathlib.Path) -> None:
    # Only the refusal of the flag is worth a second start.
    b = tmp_path / "broken-cairn"
    count = tmp_path / "starts"
    b.write_text(f"#!/bin/sh\necho x >> '{count}'\necho 'cairn: open store: permission denied' >&2\nexit 2\n")
    b.chmod(0o755)
    with pytest.raises(RuntimeError, match="^start cairn serve: cairn: open store: permission denied$"):
        cairnlog.open(str(tmp_path / "s"), bin=str(b))
    assert count.read_text() == "x\n"
