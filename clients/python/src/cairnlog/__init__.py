"""cairn from Python: durable, resumable, forkable agent steps.

    import cairnlog
    with cairnlog.open() as ws:              # a private `cairn serve` on the default store
        s = ws.session("research-42")
        state = s.resume() or {"messages": []}
        ...
        s.commit(state, record={"turn": 1})  # fenced: ConflictError if another writer moved on

Standard library only. Errors: ConflictError, NotFoundError, InvalidError,
LimitError, UnauthorizedError, UnavailableError, StoreRefusedError, all
CairnError.
"""

from .client import Client, Step, is_reply
from .errors import (CairnError, ConflictError, InvalidError, LimitError, NotFoundError, StoreRefusedError,
                     UnauthorizedError, UnavailableError, UnreadableSessionsWarning)
from .session import Session
from .workspace import Workspace, find_cairn, open

Conflict = ConflictError
"""The name the first client (internal/pyclient) used."""
NotFound = NotFoundError
"""The name the first client (internal/pyclient) used."""

__all__ = [
    "CairnError", "Client", "Conflict", "ConflictError", "InvalidError", "LimitError", "NotFound",
    "NotFoundError", "Session", "Step", "StoreRefusedError", "UnauthorizedError", "UnavailableError", "UnreadableSessionsWarning", "Workspace", "find_cairn",
    "is_reply", "open",
]
__version__ = "0.1.0"
