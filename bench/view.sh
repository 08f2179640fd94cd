#!/usr/bin/env bash
# `delta view` (and `delta export`) on a 1,000-iteration run: wall time and size. Prints
# figures; nothing here passes or fails. The run is synthesized (journal, metadata and
# io/ records in the layout the engine writes), because a real 1,000-iteration run would
# resend its growing history 1,000 times; every observation is 10,000 characters, the
# engine's cap, so the page has the most to fold.
#
#   bench/view.sh [ITERATIONS]        (default 1000; builds the release binary)
set -euo pipefail
cd "$(dirname "$0")/.."
iterations="${1:-1000}"
cargo build --quiet --release --locked --bin delta
target_dir="$(cargo metadata --quiet --format-version 1 --no-deps \
  | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
delta="$target_dir/release/delta"
work="$(mktemp -d "${TMPDIR:-/tmp}/delta-view-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT

python3 - "$work/ws" "$iterations" <<'PY'
import json, os, sys

ws, n = sys.argv[1], int(sys.argv[2])
run = os.path.join(ws, ".delta", "bench")
os.makedirs(os.path.join(run, "io", "invocations"))
os.makedirs(os.path.join(run, "io", "tool_executions"))
ts = "2026-01-01T00:00:00.000Z"
events = []


def add(kind, payload):
    events.append(json.dumps({"seq": len(events) + 1, "timestamp": ts, "type": kind,
                              "payload": payload}))


def invocation(inv, iteration, reason):
    d = os.path.join(run, "io", "invocations", inv)
    os.makedirs(d)
    with open(os.path.join(d, "metadata.json"), "w") as f:
        json.dump({"invocation_id": inv, "iteration": iteration, "model": "gpt-4o-mini",
                   "response_model": "gpt-4o-mini", "status": "SUCCESS", "started_at": ts,
                   "duration_ms": 5, "token_usage": {"prompt_tokens": 1000,
                   "completion_tokens": 50, "total_tokens": 1050}, "finish_reason": reason,
                   "attempts": 1, "retries": [], "error": None, "response_received": True}, f)


add("RUN_START", {"run_id": "bench", "task": "benchmark", "agent_ref": "/agent"})
observation = ("line of tool output " * 600)[:10000]
for i in range(n):
    inv, act, call = f"inv-{i}", f"act-{i}", f"call_{i}"
    invocation(inv, i + 1, "tool_calls")
    add("HOOK_EXECUTION_AUDIT", {"hook_name": "pre_llm_request", "status": "SUCCESS",
                                 "io_path_ref": f"io/hooks/{len(events) + 1:03}_pre_llm_request/"})
    add("THOUGHT", {"content": f"Step {i}: reading the next chunk.", "llm_invocation_ref": inv,
                    "tool_calls": [{"id": call, "name": "read_file",
                                    "arguments": json.dumps({"path": f"f{i}.txt"})}]})
    add("ACTION_REQUEST", {"action_id": act, "tool_call_id": call, "tool_name": "read_file",
                           "tool_args": {"path": f"f{i}.txt"},
                           "resolved_command": f"cat f{i}.txt"})
    t = os.path.join(run, "io", "tool_executions", act)
    os.makedirs(t)
    with open(os.path.join(t, "duration_ms.txt"), "w") as f:
        f.write("3\n")
    add("ACTION_RESULT", {"action_id": act, "tool_call_id": call, "status": "SUCCESS",
                          "observation_content": observation, "exit_code": 0,
                          "execution_ref": act})
invocation("inv-last", n + 1, "stop")
add("THOUGHT", {"content": "done", "llm_invocation_ref": "inv-last", "tool_calls": []})
add("RUN_END", {"status": "COMPLETED", "result": "done"})
with open(os.path.join(run, "journal.jsonl"), "w") as f:
    f.write("\n".join(events) + "\n")
with open(os.path.join(run, "metadata.json"), "w") as f:
    json.dump({"schema_version": "1.0", "run_id": "bench", "status": "COMPLETED",
               "task": "benchmark", "agent_name": "bench", "agent_home": "/agent",
               "work_dir": ws, "workspace_id": None, "created_at": ts, "updated_at": ts,
               "end_time": ts, "iterations": n + 1, "max_iterations": n + 1, "error": None,
               "result": "done", "usage": {"input_tokens": 1000 * (n + 1),
               "output_tokens": 50 * (n + 1), "total_cost_usd": 0.1, "model_usage": {}},
               "pid": 1, "hostname": "bench", "process_name": "delta", "start_time": ts,
               "process_start_time": None}, f, indent=2)
PY

millis() { echo $(( $(date +%s%N) / 1000000 )); }
journal_kib=$(( $(wc -c < "$work/ws/.delta/bench/journal.jsonl") / 1024 ))
times=()
for _ in 1 2 3 4 5; do
  start=$(millis)
  "$delta" view --run-id bench -w "$work/ws" > /dev/null
  times+=($(( $(millis) - start )))
done
page="$work/ws/.delta/bench/view.html"
echo "delta view, $iterations iterations (journal $journal_kib KiB, 10,000-character observations)"
echo "  wall time, 5 runs, sorted (ms): $(printf '%s\n' "${times[@]}" | sort -n | tr '\n' ' ')"
echo "  page: $(( $(wc -c < "$page") / 1024 )) KiB"
for format in atif otlp; do
  start=$(millis)
  "$delta" export --run-id bench -w "$work/ws" --format "$format" > "$work/$format.json"
  echo "  export --format $format: $(( $(millis) - start )) ms, $(( $(wc -c < "$work/$format.json") / 1024 )) KiB"
done
