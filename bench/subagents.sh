#!/usr/bin/env bash
# Sub-agents (issue 29), against mock-llm. Figures, not pass/fail.
#  1. A child's overhead: the same worker agent (2 scripted answers, one `true` tool) as a
#     top-level `delta run` (process wall time) and as a sub-agent (its call's
#     ACTION_REQUEST -> ACTION_RESULT in the caller's journal; and the caller's wall time
#     minus that of the same caller whose tool is a command instead), medians of N runs.
#  2. A fan-out: a caller making 50 agent calls over 13 turns (max_concurrent 4) against
#     50 lone `delta run`s of the worker, 4 at a time (xargs -P4); every answer waits
#     delay_ms 20. Wall times, their ratio and the caller's peak RSS; medians of 3.
# Usage: bench/subagents.sh [N]   (default 20). BIN=target/debug measures a debug build
# instead of building and using the release one.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
if [ -z "${BIN:-}" ]; then
  cargo build --release --locked -p delta --bin delta -p mock-llm --bin mock-llm >&2
  BIN=$PWD/target/release
fi
bin=$(cd "$BIN" && pwd)
echo "binaries: $bin; $(uptime)"
work=$(mktemp -d)
mocks=()
trap 'for pid in "${mocks[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"' EXIT
context=$PWD/examples/hello-world/context.yaml
cd "$work"

# mock SCRIPT: starts mock-llm on it; its base URL in $url.
mock() {
  "$bin/mock-llm" --script "$1" > "$1.port" &
  mocks+=("$!")
  for _ in $(seq 1 100); do [ -s "$1.port" ] && break; sleep 0.05; done
  url="http://127.0.0.1:$(head -1 "$1.port")/v1"
}
agent() { # DIR NAME TOOLS_YAML
  mkdir -p "$1"
  printf 'name: %s\nllm:\n  model: gpt-4o-mini\nsubagents: {max_concurrent: 4}\ntools:\n%s' "$2" "$3" > "$1/agent.yaml"
  echo "You are a benchmark agent." > "$1/system_prompt.md"
  cp "$context" "$1/"
}
median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
now_ms() { date +%s%3N; }

cat > worker.yaml <<'YAML'
mode: by_conversation
steps:
  - message: {tool_calls: [{name: mark, arguments: {}}], delay_ms: DELAY}
  - message: {content: "worked", delay_ms: DELAY}
YAML
agent worker bench-worker '  - name: mark
    description: Does nothing.
    exec: "true"
'
agent caller bench-caller '  - name: work
    description: Hands a part to the worker.
    agent: ../worker
    message: "Do part ${part}"
'
agent plain bench-plain '  - name: work
    description: Does nothing.
    exec: "true ${part}"
'
cat > caller.yaml <<'YAML'
mode: by_conversation
steps:
  - message: {tool_calls: [{name: work, arguments: {part: "1"}}], delay_ms: DELAY}
  - message: {content: "done", delay_ms: DELAY}
YAML

# 1. Overhead, answers at once.
sed -i 's/DELAY/0/' worker.yaml caller.yaml
mock worker.yaml
echo "DELTA_BASE_URL=$url" > worker/.env
mock caller.yaml
export DELTA_BASE_URL=$url DELTA_API_KEY=bench
lone=() child=() caller=() plain=()
for i in $(seq 1 "$runs"); do
  t=$(now_ms); "$bin/delta" run --agent worker -w ws -m "Do part 1" --run-id "lone$i" >/dev/null 2>&1
  lone+=($(($(now_ms) - t)))
  t=$(now_ms); "$bin/delta" run --agent caller -w ws -m "Go" --run-id "caller$i" >/dev/null 2>&1
  caller+=($(($(now_ms) - t)))
  t=$(now_ms); "$bin/delta" run --agent plain -w ws -m "Go" --run-id "plain$i" >/dev/null 2>&1
  plain+=($(($(now_ms) - t)))
  child+=("$(python3 - "ws/.delta/caller$i/journal.jsonl" <<'PY'
import json, sys
from datetime import datetime
at = {}
for line in open(sys.argv[1]):
    event = json.loads(line)
    if event["type"] in ("ACTION_REQUEST", "ACTION_RESULT"):
        at[event["type"]] = datetime.fromisoformat(event["timestamp"].replace("Z", "+00:00"))
print(round((at["ACTION_RESULT"] - at["ACTION_REQUEST"]).total_seconds() * 1000))
PY
)")
done
l=$(printf '%s\n' "${lone[@]}" | median); c=$(printf '%s\n' "${child[@]}" | median)
w=$(printf '%s\n' "${caller[@]}" | median); p=$(printf '%s\n' "${plain[@]}" | median)
echo "1. worker as a top-level run: median ${l} ms wall (process) over $runs"
echo "   as a sub-agent: median ${c} ms from its call's ACTION_REQUEST to ACTION_RESULT;"
echo "   caller with the sub-agent ${w} ms - caller with a command tool ${p} ms = $(echo "$w - $p" | bc) ms"

# 2. Fan-out: 50 calls, 12 turns of 4 and one of 2, every answer after 20 ms.
sed -i 's/delay_ms: 0/delay_ms: 20/' worker.yaml
{
  echo "mode: by_conversation"
  echo "steps:"
  n=0
  for turn in $(seq 0 12); do
    count=4; [ "$turn" -eq 12 ] && count=2
    calls=$(for k in $(seq 1 "$count"); do printf '{name: work, arguments: {part: "%s"}}, ' $((n + k)); done)
    repeat=$([ "$turn" -eq 0 ] && echo 1 || echo 4)
    echo "  - message: {tool_calls: [${calls%, }], delay_ms: 20, repeat: $repeat}"
    n=$((n + count))
  done
  echo '  - message: {content: "all done", delay_ms: 20, repeat: 2}'
} > fanout.yaml
for kill_pid in "${mocks[@]}"; do kill "$kill_pid" 2>/dev/null || true; done
mocks=()
mock worker.yaml
echo "DELTA_BASE_URL=$url" > worker/.env
mock fanout.yaml
DELTA_BASE_URL=$url
tree=() fleet=() rss=()
for i in 1 2 3; do
  t=$(now_ms)
  /usr/bin/time -v -o "time$i.txt" "$bin/delta" run --agent caller -w fan -m "Fan out" --run-id "fan$i" >/dev/null 2>&1
  tree+=($(($(now_ms) - t)))
  rss+=("$(awk -F': ' '/Maximum resident set size/ {print $2}' "time$i.txt")")
  done_runs=$(grep -l '"status": *"COMPLETED"' fan/.delta/fan"$i".*/metadata.json | wc -l)
  [ "$done_runs" -eq 50 ] || { echo "fan$i: $done_runs of 50 children COMPLETED" >&2; exit 1; }
  t=$(now_ms)
  seq 1 50 | xargs -P4 -I{} "$bin/delta" run --agent worker -w "lone-fan$i" -m "Do part {}" --run-id "l{}" >/dev/null 2>&1
  fleet+=($(($(now_ms) - t)))
done
tm=$(printf '%s\n' "${tree[@]}" | median); fm=$(printf '%s\n' "${fleet[@]}" | median)
echo "2. 50 sub-agents (max_concurrent 4): ${tree[*]} ms (median $tm)"
echo "   50 lone runs, 4 at a time:       ${fleet[*]} ms (median $fm)"
echo "   ratio $(echo "scale=2; $tm / $fm" | bc) (target <= 1.2); caller peak RSS ${rss[*]} KiB"
echo "load: $(uptime)"
