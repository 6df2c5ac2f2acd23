#!/usr/bin/env bash
# The README's first command: run a small agent loop on the local default
# store, kill it mid-run with SIGKILL, resume it from its last step, fork
# it, and print the log.
set -euo pipefail
cairn=${1:-cairn}
here=$(cd "$(dirname "$0")" && pwd)
session=demo-$(date +%Y%m%d-%H%M%S)-$$

echo "== store: ${CAIRN_STORE:-$("$cairn" help | sed -n 's/.*else \(\/.*\)$/\1/p')}"
echo "== running the agent loop (12 steps); it will be killed mid-run"
# Job control puts the loop in a process group of its own, so that the
# kill below takes its running cairn commit down with it, as a crash of
# the machine would (no commit lands after the kill).
set -m
"$here/agent.sh" "$cairn" "$session" 12 &
pid=$!
set +m
# Kill it mid-run, once it has committed step 4, however slow the machine.
head_step() { { "$cairn" log "$session" --json 2>/dev/null || true; } | head -n 1 | sed -nE 's/.*"step":([0-9]+).*/\1/p'; }
while kill -0 "$pid" 2>/dev/null; do
  n=$(head_step)
  [ "${n:-0}" -ge 4 ] && break
  sleep 0.1
done
{ kill -9 -- "-$pid"; wait "$pid"; } 2>/dev/null || true
echo "== killed with SIGKILL; head is now:"
"$cairn" log "$session" | head -n 1

echo "== resuming: the loop continues from its last step, no step is redone"
"$here/agent.sh" "$cairn" "$session" 12

echo "== forking $session@4 into $session-alt (one small manifest, no data copied)"
"$cairn" fork "$session@4" "$session-alt"
# The alternative step 5 goes on from the shared past: step 4's state
# with one message added and the scratchpad rewritten.
"$cairn" show "$session-alt" | python3 -c '
import json, sys
s = json.load(sys.stdin)
s["messages"].append({"role": "user", "content": "try another way"})
s["scratchpad"] = "alt: trying another way"
json.dump(s, sys.stdout)' |
  "$cairn" commit "$session-alt" - --expect 4 --record '{"messages":[{"role":"user","content":"try another way"}]}' > /dev/null

echo "== log of the fork: its own step, then the shared past"
"$cairn" log "$session-alt"
echo "== replay of the fork from step 4: each step's messages and what it changed"
"$cairn" replay "$session-alt" --from 4
echo "== diff $session@4 $session-alt: only the fork's own step"
"$cairn" diff "$session@4" "$session-alt"
echo "== diff $session@4 $session: the original went on its own way"
"$cairn" diff "$session@4" "$session"
echo "== verify"
"$cairn" verify "$session" "$session-alt"
