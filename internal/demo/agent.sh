#!/usr/bin/env bash
# A toy agent loop: each step "calls a model" (sleeps), appends a message
# to its state and commits the whole state as the next step. On start it
# resumes from the session's head, so a killed loop continues where it
# stopped instead of starting over.
set -euo pipefail
cairn=$1 session=$2 steps=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

head=0
if "$cairn" show "$session" > "$work/state.json" 2>/dev/null; then
  head=$("$cairn" log "$session" --json | head -n 1 | sed -E 's/.*"step":([0-9]+).*/\1/')
  echo "agent: resumed $session at step $head"
else
  echo '{"messages":[],"scratchpad":""}' > "$work/state.json"
  echo "agent: new session $session"
fi

for ((n = head + 1; n <= steps; n++)); do
  sleep 0.2 # the expensive model call this step pays for
  python3 - "$work/state.json" "$n" <<'PY'
import json, sys
path, n = sys.argv[1], int(sys.argv[2])
s = json.load(open(path))
s["messages"].append({"role": "assistant", "content": f"step {n}: " + "thinking " * 40})
s["scratchpad"] = f"working on step {n + 1}"
json.dump(s, open(path, "w"))
PY
  "$cairn" commit "$session" --json-file "$work/state.json" --expect $((n - 1)) \
    --record "{\"messages\":[{\"role\":\"assistant\",\"content\":\"step $n: thinking\"}]}" > /dev/null
  echo "agent: committed $session@$n"
done
