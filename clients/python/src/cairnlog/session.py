"""A session that tracks its head and fences every commit with it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional

from .client import Client, Step, _check_poll, is_reply
from .errors import ConflictError

if TYPE_CHECKING:
    from .workspace import Workspace


class Session:
    """One session of a workspace. It remembers the head it last saw and
    commits with expect=head, so a second writer of the same session gets
    ConflictError instead of a silently interleaved history."""

    def __init__(self, client: Client, name: str, workspace: Optional["Workspace"] = None) -> None:
        self.client = client
        self.name = name
        self.workspace = workspace
        self.head: int = 0
        """The step this session object last saw as its head (0: none yet)."""
        self.last: Optional[Step] = None
        """That head step, as the API returned it."""

    def __repr__(self) -> str:
        return f"Session({self.name!r}, head={self.head})"

    def resume(self) -> Any:
        """Read the head: return its state (None for a new session) and track it."""
        st = self.client.head(self.name)
        self.last = st
        self.head = st["step"] if st else 0
        return st.get("state") if st else None

    def commit(self, state: Any, record: Any = None, status: Optional[str] = None,
               idempotency_key: Optional[str] = None) -> Step:
        """Commit state as the next step after the tracked head; raises
        ConflictError if another writer moved the head meanwhile. status:
        see Client.commit (None, the default, is "running"). See
        Client.commit for idempotency_key: a retry with the same key whose
        step landed is answered with it, though the head moved past the
        tracked one when that step landed."""
        st = self.client.commit(self.name, state, record=record, status=status, expect=self.head,
                                idempotency_key=idempotency_key)
        self.head, self.last = st["step"], st
        return st

    def ask(self, state: Any, question: Any, idempotency_key: Optional[str] = None, **record: Any) -> Step:
        """Commit state as a step that awaits a human's answer to question."""
        st = self.client.ask(self.name, state, question, expect=self.head, idempotency_key=idempotency_key, **record)
        self.head, self.last = st["step"], st
        return st

    def wait_reply(self, timeout: Optional[float] = None, poll: float = 30) -> Any:
        """Wait for the human's reply to the question at the tracked head and
        return it; None if timeout seconds pass first. The reply becomes the
        tracked head even if other steps landed after it, so the next commit
        is a ConflictError rather than a step on top of another writer's.
        Raises ConflictError if the step after the question is no reply to
        it (another writer withdrew the question and went on), or at once if
        the tracked head asks no question: nothing would ever answer it. A
        session resumed after the human answered has the reply as its head:
        its answer is last["record"]["reply"]."""
        # Closed: said as every other call says it, not as "asks no question".
        self.client._check_open()
        # Checked with a timeout too, which leaves poll unused: poll="x" was taken without a word.
        _check_poll(poll)
        q = self.head
        last = self.last
        if last is None or last.get("status") != "awaiting_input":
            at = f"{self.name}@{q}" if last is not None else f"session {self.name}"
            rec = last.get("record") if last is not None else None
            hint = (f": it is the reply to the question at {self.name}@{rec['in_reply_to']}, "
                    "its answer in last['record']['reply']") if is_reply(rec) else \
                ": ask one first (Session.ask), or resume() a session that awaits an answer"
            raise ConflictError(409, "conflict", f"{at} asks no question, so no reply will come{hint}")
        if timeout is None:
            st = self.client.wait_for_reply(self.name, q, poll=poll)
        else:
            st = self.client.wait(self.name, q, timeout=timeout)
            if st is None:
                return None
            st = self.client.step_after(self.name, q, st)
        rec = st.get("record")
        if not is_reply(rec) or rec["in_reply_to"] != q:
            raise ConflictError(409, "conflict",
                                f"{self.name}@{st['step']} is no reply to the question at {self.name}@{q}: "
                                "another writer went on without an answer")
        self.head, self.last = st["step"], st
        return rec["reply"]

    def fork(self, to: str, step: Optional[int] = None) -> "Session":
        """Fork step (default the head) into a new session and return it, its head tracked."""
        st = self.client.fork(self.name, to, step=step)
        s = Session(self.client, to, self.workspace)
        s.head, s.last = st["step"], st
        return s

    def log(self, limit: int = 100, from_step: Optional[int] = None) -> List[Step]:
        """Steps newest first, following parents across forks."""
        return self.client.log(self.name, limit=limit, from_step=from_step)

    def iter_log(self, page: int = 1000) -> Iterator[Step]:
        """Every step, newest first, across forks, read `page` steps a request."""
        return self.client.iter_log(self.name, page=page)

    def show(self, step: Optional[int] = None) -> Optional[Step]:
        """A step (default the head) with its state; None if the session has no steps."""
        if step is None:
            return self.client.head(self.name)
        return self.client.step(self.name, step)

    def diff(self, other: str) -> List[Dict[str, str]]:
        """Changes from this session's head to other ("S" or "S@N")."""
        return self.client.diff(self.name, other)
