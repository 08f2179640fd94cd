#!/usr/bin/env bash
# Issue 31's bounds, measured: how long `delta batch run` takes to end after SIGTERM in
# each state it can wait in, what a 1 GiB context source costs `delta run`, and how long
# an MCP call answered with 17 MiB takes to end. Debug build (what the tests run).
# Figures, not pass/fail.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --locked -p delta --bin delta >&2
cargo build --locked -p mock-llm --bin mock-llm >&2
bin=$PWD/target/debug
work=$(mktemp -d)
trap 'kill "$mock_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"

mkdir agent
cat > agent/agent.yaml <<'YAML'
name: bench-hostile
llm:
  model: gpt-4o-mini
tools:
  - name: wait
    description: Waits.
    shell: "sleep 30"
YAML
echo "You wait." > agent/system_prompt.md
cp "$OLDPWD/examples/hello-world/context.yaml" agent/
cat > script.yaml <<'YAML'
mode: by_conversation
steps:
  - message: {content: "waiting", tool_calls: [{name: wait, arguments: {}}]}
  - message: {content: "done"}
YAML
"$bin/mock-llm" --script script.yaml > port.txt &
mock_pid=$!
for _ in $(seq 1 50); do [ -s port.txt ] && break; sleep 0.1; done
export DELTA_BASE_URL="http://127.0.0.1:$(head -1 port.txt)/v1" DELTA_API_KEY=bench

now_ms() { date +%s%3N; }
# The pid a run's metadata records (its owner, started by this script).
owner() { grep -o '"pid": *[0-9]*' "$1/.delta/a/metadata.json" | grep -o '[0-9]*$'; }

# Starts `delta batch run` on $1 and $2, waits until it has started its tasks (its signal
# handlers are in place then), lets it settle $3 s, sends SIGTERM and prints the time to
# its exit.
term_after() {
  local tasks=$1 out=$2 settle=$3 label=$4
  "$bin/delta" batch run "$tasks" --agent agent --out "$out" --jobs 2 2> "$out.err" &
  local driver=$!
  for _ in $(seq 1 200); do grep -qs "task(s) to run" "$out.err" && break; sleep 0.05; done
  sleep "$settle"
  local sent
  sent=$(now_ms)
  kill -TERM "$driver"
  wait "$driver" || true
  printf '%s: SIGTERM to exit %d ms\n' "$label" $(( $(now_ms) - sent ))
}

# (1) Two tasks mid-run: their tools sleep 30 s; the children answer SIGINT.
printf '{"id": "a", "message": "wait"}\n{"id": "b", "message": "wait"}\n' > two.jsonl
term_after two.jsonl busy-children 2 "two children in a 30 s tool"

# (2) A task whose run another live process owns (this script holds its run.lock).
printf '{"id": "a", "message": "wait"}\n' > one.jsonl
"$bin/delta" batch run one.jsonl --agent agent --out owned --jobs 1 2>/dev/null &
first=$!
for _ in $(seq 1 200); do [ -s owned/runs/a/.delta/a/metadata.json ] && break; sleep 0.05; done
sleep 1
kill -KILL "$first"; wait "$first" || true   # the run goes on without its driver
orphan=$(owner owned/runs/a)
term_after one.jsonl owned 1 "waiting on a run another process owns"
kill -KILL "$orphan" 2>/dev/null || true

# (3) A task whose child keeps refusing (damaged metadata): the driver backs off.
"$bin/delta" batch run one.jsonl --agent agent --out refusing --jobs 1 2>/dev/null &
first=$!
for _ in $(seq 1 200); do [ -s refusing/runs/a/.delta/a/metadata.json ] && break; sleep 0.05; done
kill -KILL "$first"; wait "$first" || true
kill -KILL "$(owner refusing/runs/a)" 2>/dev/null || true
echo '{' > refusing/runs/a/.delta/a/metadata.json
term_after one.jsonl refusing 1.2 "backing off a refusing task"

# (4) A 1 GiB context source (sparse) with max_tokens: 500, against a model that answers
# at once; then the same run by another build, if given: bench/hostile.sh OTHER_DELTA.
mkdir big
printf 'name: big\nllm:\n  model: gpt-4o-mini\n' > big/agent.yaml
echo "You read." > big/system_prompt.md
printf 'The start.\n' > big/huge.txt
truncate -s 1G big/huge.txt
cat > big/context.yaml <<'YAML'
sources:
  - type: file
    path: '${AGENT_HOME}/system_prompt.md'
  - type: file
    id: huge
    path: '${AGENT_HOME}/huge.txt'
    max_tokens: 500
  - type: journal
YAML
printf 'steps:\n  - message: {content: done}\n' > done.yaml
"$bin/mock-llm" --script done.yaml > port2.txt &
second_mock=$!
for _ in $(seq 1 50); do [ -s port2.txt ] && break; sleep 0.1; done
export DELTA_BASE_URL="http://127.0.0.1:$(head -1 port2.txt)/v1"
for build in "$bin/delta" "${1:-}"; do
  [ -n "$build" ] || continue
  /usr/bin/time -f '%M %e %x' -o rss.txt "$build" run --agent big -y -m "read" --format raw >/dev/null 2>&1 || true
  read -r rss wall code < <(tail -1 rss.txt)
  printf '1 GiB source, max_tokens 500 (%s): exit %s, %s s, peak RSS %s KiB\n' "$build" "$code" "$wall" "$rss"
done
kill "$second_mock"
