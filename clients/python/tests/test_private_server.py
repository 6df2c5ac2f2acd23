"""The private `cairn serve` that open() starts does not outlive its workspace."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import threading
import time

import pytest

import cairnlog

SRC = pathlib.Path(__file__).resolve().parents[1] / "src"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by init) is not serving.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1][:1] != "Z"
    except OSError:
        return True


def _gone(pid: int, within: float = 10) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_server_stops_when_python_exits_without_close(cairn_bin: str, tmp_path: pathlib.Path) -> None:
    # A script that forgets close(): its server, on a random token no one
    # else knows, used to run on after the interpreter exited.
    script = (
        "import sys, cairnlog\n"
        f"ws = cairnlog.open({str(tmp_path / 's')!r}, bin={cairn_bin!r})\n"
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


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_server_stops_when_python_is_killed(cairn_bin: str, tmp_path: pathlib.Path, sig: int) -> None:
    # Killed by a signal, Python runs no finaliser: its server, on a token
    # no one else knows, ran on for ever, holding its port and store.
    script = (
        "import sys, time, cairnlog\n"
        f"ws = cairnlog.open({str(tmp_path / 's')!r}, bin={cairn_bin!r})\n"
        "ws.session('x').commit({'a': 1})\n"
        "print(ws._process.pid, flush=True)\n"
        "time.sleep(600)\n"
    )
    r = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                         env=dict(os.environ, PYTHONPATH=str(SRC)))
    assert r.stdout is not None
    pid = int(r.stdout.readline())
    r.send_signal(sig)
    r.wait()
    r.stdout.close()
    try:
        assert _gone(pid), f"cairn serve (pid {pid}) still runs after the Python process was killed"
    finally:
        if _alive(pid):
            os.kill(pid, 9)


def test_server_stops_when_the_workspace_is_dropped(cairn_bin: str, tmp_path: pathlib.Path) -> None:
    import gc

    import cairnlog

    ws = cairnlog.open(str(tmp_path / "s"), bin=cairn_bin)
    p = ws._process
    assert p is not None and p.poll() is None
    del ws
    gc.collect()
    try:
        p.wait(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


@pytest.mark.parametrize("where", ["bin", "env"])
def test_a_cairn_binary_that_is_not_there_is_said_so(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch,
                                                      where: str) -> None:
    # bin= or $CAIRN_BIN naming no file raised Popen's bare "[Errno 2] No
    # such file or directory"; a file that is not executable, "[Errno 13]".
    for name, why in (("no-such-cairn", "not found"), ("not-executable", "not executable")):
        b = tmp_path / name
        if why == "not executable":
            b.write_text("")
        if where == "env":
            monkeypatch.setenv("CAIRN_BIN", str(b))
        with pytest.raises(FileNotFoundError) as e:
            cairnlog.open(str(tmp_path / "store"), bin=str(b) if where == "bin" else None)
        assert str(e.value) == f"cairn binary {str(b)!r} {why}: pass bin= or set CAIRN_BIN, or put cairn on PATH"


@pytest.mark.parametrize("how", ["close", "with"])
def test_closing_leaves_no_file_open(cairn_bin: str, tmp_path: pathlib.Path, how: str) -> None:
    # close() stopped the server and left its output pipes open until the
    # garbage collector found them, each a ResourceWarning ("unclosed file")
    # under python -X dev and pytest; a program that opened many workspaces
    # held two descriptors for each.
    script = (
        "import gc, os, cairnlog\n"
        "before = len(os.listdir('/proc/self/fd'))\n"
        "for i in range(3):\n"
        + (f"    ws = cairnlog.open({str(tmp_path / 's')!r}, bin={cairn_bin!r})\n"
           "    ws.session('x').resume()\n"
           "    ws.close()\n" if how == "close" else
           f"    with cairnlog.open({str(tmp_path / 's')!r}, bin={cairn_bin!r}) as ws:\n"
           "        ws.session('x').resume()\n")
        + "    print(len(os.listdir('/proc/self/fd')) - before, flush=True)\n"
        "del ws\n"
        "gc.collect()\n"
    )
    r = subprocess.run([sys.executable, "-X", "dev", "-W", "error::ResourceWarning", "-c", script],
                       capture_output=True, text=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(SRC)))
    assert r.returncode == 0, r.stderr
    assert "ResourceWarning" not in r.stderr, r.stderr
    assert r.stdout.split() == ["0", "0", "0"], r.stdout


def test_an_interrupted_open_stops_its_server(cairn_bin: str, tmp_path: pathlib.Path) -> None:
    # Ctrl-C while open() waited for the server to listen left it running,
    # with a token no one knows: no workspace existed yet to stop it.
    pid_file = tmp_path / "pid"
    slow = tmp_path / "slow-cairn"
    # A cairn that takes its time to listen, as on a loaded machine.
    # (The pid file appears whole, by a rename, for the script that waits for it.)
    slow.write_text(f"#!/bin/sh\necho $$ > '{pid_file}.new'\nmv '{pid_file}.new' '{pid_file}'\nsleep 2\n"
                    f"exec '{cairn_bin}' \"$@\"\n")
    slow.chmod(0o755)
    script = (
        "import _thread, os, threading, time, cairnlog\n"
        "def interrupt():\n"
        f"    while not os.path.exists({str(pid_file)!r}): time.sleep(0.01)\n"
        "    _thread.interrupt_main()\n"
        "threading.Thread(target=interrupt, daemon=True).start()\n"
        "try:\n"
        f"    cairnlog.open({str(tmp_path / 's')!r}, bin={str(slow)!r})\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
        "time.sleep(5)\n"  # still running: the server must be stopped by open(), not by this exit
    )
    r = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                         env=dict(os.environ, PYTHONPATH=str(SRC)))
    try:
        assert r.stdout is not None
        assert r.stdout.readline().strip() == "interrupted"
        pid = int(pid_file.read_text())
        assert _gone(pid), f"cairn serve (pid {pid}) still runs after open() was interrupted"
    finally:
        r.kill()
        r.wait()
        if pid_file.exists() and _alive(int(pid_file.read_text())):
            os.kill(int(pid_file.read_text()), 9)


def test_a_cairn_that_never_listens_through_a_wrapper_is_given_up_on(tmp_path: pathlib.Path) -> None:
    # A $CAIRN_BIN that is a wrapper script whose own child outlives it (and
    # so holds its output open) and that printed no address: open() stopped
    # the wrapper after start_timeout, then read its stderr to the end, which
    # never came while the child lived: open() hung, start_timeout or not.
    child_pid = tmp_path / "child-pid"
    wrapper = tmp_path / "cairn-wrapper"
    wrapper.write_text(f"#!/bin/sh\necho 'starting up' >&2\nsleep 600 &\necho $! > '{child_pid}'\nwait\n")
    wrapper.chmod(0o755)
    raised: list = []

    def start() -> None:
        try:
            cairnlog.open(str(tmp_path / "store"), bin=str(wrapper), start_timeout=1)
        except BaseException as e:  # noqa: B902 - handed to the test's thread
            raised.append(e)

    t = threading.Thread(target=start, daemon=True)
    t.start()
    try:
        t.join(120)
        assert not t.is_alive(), "open() did not return"
    finally:
        if child_pid.exists():
            try:
                os.kill(int(child_pid.read_text()), signal.SIGKILL)
            except ProcessLookupError:
                pass
        t.join(30)
    assert len(raised) == 1 and isinstance(raised[0], RuntimeError), raised
    assert str(raised[0]) == "start cairn serve: no address printed within 1 s: starting up"
