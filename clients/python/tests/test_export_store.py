"""export() in remote mode exports the server's store or refuses: never another."""

from __future__ import annotations

import json
import pathlib

import pytest

import cairnlog


def test_remote_export_without_a_store_refuses(cairn_bin: str, tmp_path: pathlib.Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # The local default store holds a session the server's store does not.
    monkeypatch.delenv("CAIRN_STORE", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    with cairnlog.open(str(tmp_path / "xdg" / "cairn"), bin=cairn_bin) as other:
        other.session("elsewhere").commit({}, record={"messages": [{"role": "user", "content": "not yours"}]})
    with cairnlog.open(str(tmp_path / "served"), bin=cairn_bin) as served:
        served.session("mine").commit({}, record={"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]})
        # A server given by URL: its store is not known here. export used to
        # run `cairn export` over the local default store, a different
        # workspace, and wrote its sessions as if they were the server's.
        remote = cairnlog.open(url=served.url, token=served.client.token, bin=cairn_bin)
        out = tmp_path / "out.jsonl"
        with pytest.raises(RuntimeError, match="store"):
            remote.export("openai-jsonl", str(out))
        assert not out.exists() or "not yours" not in out.read_text()
        # Given the store, it exports that store.
        remote = cairnlog.open(str(tmp_path / "served"), url=served.url, token=served.client.token, bin=cairn_bin)
        remote.export("openai-jsonl", str(out))
        assert [json.loads(x)["messages"][0]["content"] for x in out.read_text().splitlines()] == ["hi"]


def test_remote_export_under_cairn_run_uses_its_store(cairn_bin: str, tmp_path: pathlib.Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # `cairn run` sets CAIRN_URL and CAIRN_STORE to the same workspace.
    with cairnlog.open(str(tmp_path / "served"), bin=cairn_bin) as served:
        served.session("mine").commit({}, record={"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]})
        monkeypatch.setenv("CAIRN_URL", served.url)
        monkeypatch.setenv("CAIRN_TOKEN", served.client.token or "")
        monkeypatch.setenv("CAIRN_STORE", str(tmp_path / "served"))
        remote = cairnlog.open(bin=cairn_bin)
        out = tmp_path / "out.jsonl"
        remote.export("openai-jsonl", str(out))
        assert [json.loads(x)["messages"][0]["content"] for x in out.read_text().splitlines()] == ["hi"]


def test_remote_export_without_a_binary_says_how_to_give_one(cairn_bin: str, tmp_path: pathlib.Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # It said "open the workspace with open(store=...) or open()": given the
    # store, export found no binary all the same.
    with cairnlog.open(str(tmp_path / "served"), bin=cairn_bin) as served:
        monkeypatch.delenv("CAIRN_BIN", raising=False)
        monkeypatch.setenv("PATH", str(tmp_path / "no-cairn-here"))
        remote = cairnlog.open(str(tmp_path / "served"), url=served.url, token=served.client.token)
        out = tmp_path / "out.jsonl"
        with pytest.raises(RuntimeError) as e:
            remote.export("openai-jsonl", str(out))
        assert str(e.value) == ("export runs `cairn export`, and no cairn binary was found: pass bin= to open(), "
                                "set CAIRN_BIN, or put cairn on PATH")
        assert not out.exists()
