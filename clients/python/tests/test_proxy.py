"""A loopback server is reached directly, whatever $http_proxy says."""

from __future__ import annotations

import os
import pathlib
import socket
import subprocess
import sys

import pytest

import cairnlog

SRC = pathlib.Path(__file__).resolve().parents[1] / "src"


@pytest.mark.parametrize("var", ["http_proxy", "HTTP_PROXY", "all_proxy"])
def test_loopback_server_is_not_reached_through_a_proxy(ws: cairnlog.Workspace, var: str) -> None:
    # With a proxy in the environment (and no no_proxy), urllib sent the
    # requests for a loopback server (cairnlog.open()'s own, or cairn
    # run's $CAIRN_URL), bearer token and all, to the proxy: here nothing
    # listens there, and every call was UnavailableError "connection
    # refused". TypeScript's client uses no proxy.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("no_proxy", "http_proxy", "all_proxy")}
    env.update({var: f"http://127.0.0.1:{port}", "PYTHONPATH": str(SRC), "CAIRN_URL": ws.url,
                "CAIRN_TOKEN": ws.client.token or ""})
    script = """
import cairnlog, sys
ws = cairnlog.open()
s = ws.session("s")
assert s.resume() is None
print(s.commit({"n": 1})["step"])
print(cairnlog.Client(sys.argv[1]).head("s")["step"])
"""
    r = subprocess.run([sys.executable, "-c", script, ws.url.replace("127.0.0.1", "localhost")],
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["1", "1"]
