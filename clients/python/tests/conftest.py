"""Fixtures: the cairn binary, and a private `cairn serve` per test."""

from __future__ import annotations

import os
import pathlib
import shutil
from typing import Iterator

import pytest

import cairnlog

REPO = pathlib.Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def cairn_bin() -> str:
    """$CAIRN_BIN, else the repository's .cache/bin/cairn, else cairn on PATH.
    Missing: the test fails under CI=true, else it is skipped."""
    for b in (os.environ.get("CAIRN_BIN"), str(REPO / ".cache/bin/cairn"), shutil.which("cairn")):
        if b and os.path.exists(b):
            return b
    if os.environ.get("CI") == "true":
        pytest.fail("cairn binary not found: set CAIRN_BIN or run `make build`")
    pytest.skip("cairn binary not found (set CAIRN_BIN or run `make build`)")


@pytest.fixture
def ws(cairn_bin: str, tmp_path: pathlib.Path) -> Iterator[cairnlog.Workspace]:
    """A workspace in local mode over a fresh directory store."""
    with cairnlog.open(str(tmp_path / "store"), bin=cairn_bin) as w:
        yield w
