"""A workspace: a running server (given by URL) or a private local one."""

from __future__ import annotations

import math
import os
import re
import secrets
import shutil
import signal
import subprocess
import threading
import weakref
from typing import Any, Dict, List, Optional, Sequence

from .client import Client, _check_timeout, _name
from .errors import InvalidError
from .session import Session


class Workspace:
    """A cairn workspace reached over HTTP. Use open() to make one; close()
    (or a with block) stops a server that open() started."""

    def __init__(self, client: Client, store: Optional[str] = None, bin: Optional[str] = None,
                 process: Optional["subprocess.Popen[str]"] = None,
                 _readers: Sequence[threading.Thread] = ()) -> None:
        self.client = client
        self.store = store
        self.bin = bin
        self._process = process
        # The store export reads: store, or else (a private server, which
        # opened cairn's default store) that same default.
        self._default_store_is_served = process is not None
        # A workspace dropped or left open at exit stops its server too:
        # no one else knows its token, so it would serve no one.
        self._stop = weakref.finalize(self, _stop, process, tuple(_readers)) if process is not None else None

    def __enter__(self) -> "Workspace":
        self.client._check_open()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Close the workspace's client (a later call on it, or on a session
        of the workspace, raises InvalidError with code "closed", sending
        nothing) and stop the private server, if open() started one."""
        self.client.close()
        self._process = None
        if self._stop is not None:
            self._stop()

    @property
    def url(self) -> str:
        """The server's URL."""
        return self.client.url

    def session(self, name: str) -> Session:
        """The session called name (it need not exist yet). A name that is
        no str is a TypeError, and a closed workspace's InvalidError (code
        "closed"), here rather than at the session's first call."""
        self.client._check_open()
        return Session(self.client, _name(name, "session"), self)

    def sessions(self, prefix: Optional[str] = None) -> List[Dict[str, Any]]:
        """Sessions with their heads."""
        return self.client.sessions(prefix)

    def inbox(self) -> List[Dict[str, Any]]:
        """Sessions whose head awaits a human."""
        return self.client.inbox()

    def reply(self, session: str, value: Any, expect: Optional[int] = None,
              idempotency_key: Optional[str] = None) -> Dict[str, Any]:
        """Answer the question at a session's head; expect=N (the step the inbox
        showed) raises ConflictError if the question there is another.
        idempotency_key: see Client.reply (default: a fresh key for this call)."""
        return self.client.reply(session, value, expect=expect, idempotency_key=idempotency_key)

    def diff(self, a: str, b: str) -> List[Dict[str, str]]:
        """Changes from step a to step b ("S" or "S@N")."""
        return self.client.diff(a, b)

    def export(self, format: str, out: str, sessions: Optional[Sequence[str]] = (),
               args: Optional[Sequence[str]] = ()) -> None:
        """Export trajectories for training with `cairn export` (formats:
        openai-jsonl, atif, sharegpt, parquet, preference) to the file out.
        sessions are name globs; args are more `cairn export` flags. The
        HTTP API has no export route, so this needs the local mode (or a
        store given to open()). None for sessions or args is none, as for
        every other optional argument: every session, no more flags."""
        # Not sent to the server, but a call on a closed workspace all the
        # same: it ran cairn export after close(), as no other call does.
        self.client._check_open()
        # None was "'NoneType' object is not iterable".
        sessions = () if sessions is None else sessions
        args = () if args is None else args
        for seq, what in ((sessions, "sessions"), (args, "args")):
            if isinstance(seq, (str, bytes)):
                # "a*" went out as --session a --session '*', one a character.
                raise TypeError(f"{what}: want a list of str, not the {type(seq).__name__} {seq!r}: pass [{seq!r}]")
        # Read once (a generator is spent by the check below), then checked.
        sessions, args = list(sessions), list(args)
        for seq, what in ((sessions, "sessions"), (args, "args")):
            for x in seq:
                if not isinstance(x, str):
                    # subprocess's "expected str, bytes or os.PathLike object, not int".
                    raise TypeError(f"{what}: want a list of str, not one holding {x!r}")
        for v, what in ((format, "format: want an export format (a str, such as 'openai-jsonl')"),
                        (out, "out: want the path of the file to write (a str)")):
            if not isinstance(v, str):
                raise TypeError(f"{what}, not {v!r}")
        if out in ("", "-"):
            # "-" had cairn export write to its standard output, which export
            # captures and drops: the trajectories were lost without a word.
            raise InvalidError(400, "bad_request", f"out: want the path of the file to write, not {out!r}"
                                                   " (export writes a file; standard output is not returned)")
        if self.bin is None:
            # It said to open(store=...), which found no binary either.
            raise RuntimeError("export runs `cairn export`, and no cairn binary was found: pass bin= to open(), "
                               "set CAIRN_BIN, or put cairn on PATH")
        if not self.store and not self._default_store_is_served:
            raise RuntimeError(f"export needs the store of the server at {self.url}: pass it to open(store=..., url=...)"
                               " or set CAIRN_STORE")
        cmd = [self.bin]
        if self.store:
            cmd += ["--store", self.store]
        cmd += ["export", "--format", format, "--out", out]
        for g in sessions:
            cmd += ["--session", g]
        cmd += list(args)
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"cairn export: {r.stderr.strip()}")


def _stop(p: "subprocess.Popen[str]", readers: Sequence[threading.Thread] = ()) -> None:
    """Stop a private server: terminate, then kill if it lingers; then wait
    for the threads that drain its output to close its pipes."""
    if p.poll() is None:
        p.terminate()
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    for t in readers:
        t.join(timeout=5)
    if p.stdin is not None:
        p.stdin.close()


def _exited(p: "subprocess.Popen[str]") -> Optional[str]:
    """The words for a private server that has exited, or None if it runs.
    Called when it did not answer: a server killed mid-call closes its
    connections a moment before its exit can be read, so that moment is
    waited for (at most a second)."""
    try:
        code = p.wait(timeout=1)
    except subprocess.TimeoutExpired:
        return None
    if code < 0:
        try:
            how = f"killed by {signal.Signals(-code).name}"
        except ValueError:
            how = f"killed by signal {-code}"
    else:
        how = f"exit status {code}"
    return f"the cairn serve that open() started has exited ({how}): open another workspace to go on"


def find_cairn(bin: Optional[str] = None) -> str:
    """The cairn binary: bin, else $CAIRN_BIN, else `cairn` on PATH."""
    b = bin or os.environ.get("CAIRN_BIN") or shutil.which("cairn")
    if not b:
        raise FileNotFoundError("cairn binary not found: pass bin= or set CAIRN_BIN, or put cairn on PATH")
    if not shutil.which(b):
        why = "not executable" if os.path.isfile(b) else "not found"
        raise FileNotFoundError(f"cairn binary {b!r} {why}: pass bin= or set CAIRN_BIN, or put cairn on PATH")
    return b


def open(store: Optional[str] = None, *, url: Optional[str] = None, token: Optional[str] = None,
         bin: Optional[str] = None, timeout: float = 90, start_timeout: float = 30) -> Workspace:
    """Open a workspace.

    With url (or $CAIRN_URL when no store is given) it talks to that server.
    Otherwise it starts `cairn serve` on a private loopback port with a
    fresh random token over store (default $CAIRN_STORE, else cairn's local
    default), and stops it on close() or at the end of a with block.
    """
    # Checked before a server starts: store=5 failed in subprocess's words,
    # and a start_timeout of 0 (or -1, or nan) started a server to stop it.
    for v, what in ((store, "store: want a store URL or directory"), (bin, "bin: want the path of the cairn binary")):
        if v is not None and not isinstance(v, str):
            raise TypeError(f"{what} (a str), not {v!r}")
    if store == "":
        # Taken for no store: the private server served $CAIRN_STORE or
        # cairn's default, another store than the caller's (an unset variable?).
        raise ValueError("store: want a store URL or directory, not '' (leave store out for $CAIRN_STORE or cairn's default)")
    if isinstance(start_timeout, bool) or not isinstance(start_timeout, (int, float)) \
            or not 0 < start_timeout < math.inf:
        raise ValueError(f"start_timeout {start_timeout!r}: want seconds > 0 (the default is 30)")
    # Before a server starts: the Client made after it refused a timeout of
    # 0, and the server it was made for ran on, its workspace never made.
    _check_timeout(timeout)
    if url is None and store is None:
        url = os.environ.get("CAIRN_URL")
    if url is not None:
        # The server's store is not known but for store= or $CAIRN_STORE
        # (which `cairn run` sets beside CAIRN_URL); export needs it.
        store = store or os.environ.get("CAIRN_STORE") or None
        return Workspace(Client(url, token, timeout), store=store, bin=bin or os.environ.get("CAIRN_BIN") or shutil.which("cairn"))
    exe = find_cairn(bin)
    token = secrets.token_hex(24)
    cmd = [exe]
    if store:
        cmd += ["--store", store]
    # The server stops when its stdin ends: when this process exits, even
    # killed by a signal that runs no finaliser, the pipe's end closes.
    cmd += ["serve", "--listen", "127.0.0.1:0", STOP_ON_EOF]
    env = dict(os.environ, CAIRN_TOKEN=token)
    try:
        p, url, readers = _start(cmd, env, start_timeout)
    except _Refused as e:
        if not e.refuses_flag(STOP_ON_EOF):
            raise RuntimeError(f"start cairn serve: {e.stderr or 'no address printed'}") from None
        # A cairn older than the flag: it stops at close() and at this
        # interpreter's exit (the workspace's finaliser), not when this
        # process is killed by a signal.
        try:
            p, url, readers = _start(cmd[:-1], env, start_timeout)
        except _Refused as e2:
            raise RuntimeError(f"start cairn serve: {e2.stderr or 'no address printed'}") from None
    try:
        client = Client(url, token, timeout)
    except BaseException:
        _stop(p, readers)
        raise
    client._server_gone = lambda: _exited(p)
    return Workspace(client, store=store, bin=exe, process=p, _readers=readers)


STOP_ON_EOF = "--stop-on-stdin-eof"
"""The flag that stops a private server when this process ends, however it
ends; cairn before it refuses it (exit 2, "unknown flag")."""


class _Refused(Exception):
    """cairn serve exited (or printed no address in time) instead of listening."""

    def __init__(self, returncode: Optional[int], stderr: str) -> None:
        super().__init__(stderr)
        self.returncode = returncode
        self.stderr = stderr

    def refuses_flag(self, flag: str) -> bool:
        """True if cairn refused flag: exit 2 (usage), naming it ("unknown flag --F",
        or the flag package's "flag provided but not defined: -F")."""
        return self.returncode == 2 and flag.lstrip("-") in self.stderr


def _start(cmd: List[str], env: Dict[str, str],
           start_timeout: float) -> "tuple[subprocess.Popen[str], str, tuple[threading.Thread, ...]]":
    """Start cmd, a `cairn serve`, and wait for the URL it listens on: the
    process, its URL and the threads that drain its output; or _Refused
    with its exit status and standard error."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.PIPE, env=env, text=True)
    found: List[str] = []
    ready = threading.Event()

    def read() -> None:
        assert p.stdout is not None
        with p.stdout:  # closed once the server has exited: no file left open
            for line in p.stdout:
                m = re.search(r"cairn serve: (http://\S+)", line)
                if m:
                    found.append(m.group(1))
                    break
            ready.set()
            p.stdout.read()  # keep the pipe drained until the server exits

    err: List[str] = []

    def drain() -> None:
        # Kept from the start, not read once the server has failed: a
        # cairn started through a wrapper whose own child outlives it
        # holds the pipe open, and a read to its end would never return.
        assert p.stderr is not None
        with p.stderr:
            for line in p.stderr:
                if len(err) < 100:
                    err.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    # Drain stderr too, so the server never blocks on a full pipe.
    drainer = threading.Thread(target=drain, daemon=True)
    drainer.start()
    try:
        # False: start_timeout passed with the server neither listening nor gone.
        answered = ready.wait(start_timeout)
    except BaseException:
        # Interrupted (Ctrl-C's KeyboardInterrupt, say) before the workspace
        # that would stop the server exists: stop it here.
        _stop(p, (reader, drainer))
        raise
    if not found:
        # What it said before it stopped; the wait is bounded, as _stop's.
        _stop(p, (reader, drainer))
        said = "".join(err).strip()
        if not answered:
            said = f"no address printed within {start_timeout} s" + (f": {said}" if said else "")
        raise _Refused(p.returncode, said)
    return p, found[0], (reader, drainer)
