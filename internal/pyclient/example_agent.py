#!/usr/bin/env python3
"""An example agent loop on cairn, in a few lines of standard-library Python.

Each turn "calls a model" (here: sleeps and appends a line to a call log kept
outside the state, so a test can count the calls) and commits the whole state
as the next step. On start it resumes from the session's head, so a killed
loop goes on from its last checkpoint and never pays again for a call that
was checkpointed. With --ask-at K it pauses before turn K for a human:

  --on-pause exit   commit the question and exit; no process waits. A later
                    `cairn reply` and `cairn run` (or a new start) resume it.
  --on-pause wait   long-poll the server until the reply step lands.

Run it under `cairn run --session S -- python3 example_agent.py ...`, or
against `cairn serve` with CAIRN_URL and --session.
"""

import argparse
import json
import os
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cairn_client import Client, is_reply  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--session", default=os.environ.get("CAIRN_SESSION"))
    p.add_argument("--url", default=os.environ.get("CAIRN_URL"))
    p.add_argument("--turns", type=int, default=5, help="model calls to make in all")
    p.add_argument("--calls", default=os.devnull, help="file the model calls are logged to (outside the state)")
    p.add_argument("--delay", type=float, default=0.05, help="seconds each model call takes")
    p.add_argument("--ask-at", type=int, default=-1, help="ask a human before this turn")
    p.add_argument("--on-pause", choices=["exit", "wait"], default="exit")
    a = p.parse_args()
    if not a.session:
        p.error("no session: pass --session or set CAIRN_SESSION")
    c = Client(a.url)

    head = c.head(a.session)
    if head is None:
        state, n = {"messages": [], "turns": 0, "calls": []}, 0
        print(f"agent: new session {a.session}", flush=True)
    else:
        state, n = head["state"], head["step"]
        print(f"agent: resumed {a.session} at step {n}, turn {state['turns']}", flush=True)

    while True:
        said = []  # the messages this turn adds: its step's record (docs/records.md)
        if head is not None and head["status"] == "done":
            print(f"agent: {a.session} is done", flush=True)
            return 0
        if head is not None and head["status"] == "awaiting_input":
            if a.on_pause == "exit":
                print(f"agent: waiting for a human at step {n}; exiting", flush=True)
                return 0
            print(f"agent: waiting for a human at step {n}", flush=True)
            head = c.wait_for_reply(a.session, n)
            state, n = head["state"], head["step"]
        if head is not None and is_reply(head["record"]):
            # The human's answer is part of what the model sees next.
            state["messages"].append({"role": "human", "content": head["record"]["reply"]})
            said.append({"role": "user", "content": json.dumps(head["record"]["reply"])})
        turn = state["turns"]
        if turn == a.ask_at and turn not in state.setdefault("asked", []):
            state["asked"].append(turn)
            head = c.ask(a.session, state, f"May I go on with turn {turn}?", expect=n, turn=turn)
            n = head["step"]
            continue

        call = uuid.uuid4().hex
        with open(a.calls, "a") as f:  # the expensive model call
            f.write(f"{os.getpid()} {a.session} {turn} {call}\n")
            f.flush()
            if os.path.isfile(a.calls):  # /dev/null (the default) cannot be fsynced
                os.fsync(f.fileno())
        time.sleep(a.delay)
        answer = {"role": "assistant", "content": f"turn {turn}: " + "thinking " * 20}
        state["messages"].append(answer)
        said.append(answer)
        state["turns"] = turn + 1
        state["calls"].append(call)
        done = state["turns"] >= a.turns
        head = c.commit(a.session, state, record={"turn": turn, "call": call, "messages": said},
                        status="done" if done else "running", expect=n)
        head["state"] = state
        n = head["step"]
        print(f"agent: committed {a.session}@{n} (turn {turn})", flush=True)


if __name__ == "__main__":
    sys.exit(main())
