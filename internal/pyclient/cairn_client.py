"""cairn's Python client moved to the package cairnlog (clients/python).

This module re-exports it for example_agent.py and scripts written against
the first client; new code installs cairnlog and imports it directly.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients", "python", "src"))
from cairnlog import CairnError, Client, Conflict, NotFound, is_reply  # noqa: E402,F401

__all__ = ["Client", "CairnError", "Conflict", "NotFound", "is_reply"]
