"""The README's "From Python" block, run as written: it builds the wheel
offline, pip-installs it into a fresh virtual environment with no index,
and runs a loop with the installed package (not this source tree)."""

from __future__ import annotations

import os
import re
import subprocess

from conftest import REPO


def readme_block(title: str) -> str:
    text = (REPO / "README.md").read_text()
    section = text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
    m = re.search(r"```sh\n(.*?)```", section, re.S)
    assert m, f"no sh block under {title}"
    return m.group(1)


def test_readme_python_block(cairn_bin: str) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CAIRN_URL", "CAIRN_TOKEN")}
    r = subprocess.run(["bash", "-euo", "pipefail", "-c", readme_block("From Python")], cwd=REPO, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Successfully installed cairnlog-0.1.0" in r.stdout, r.stdout
    assert r.stdout.strip().splitlines()[-1] == "{'approved': True} 3 [3, 2, 1]", r.stdout
