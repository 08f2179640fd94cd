#!/usr/bin/env bash
# delta batch throughput: N tasks (default 1,000) x 2 tool calls against mock-llm, --jobs 2,
# release build. Prints tasks per second, the driver's peak RSS, and the overhead per task
# against a lone `delta run` of the same task. Figures, not pass/fail.
set -euo pipefail
cd "$(dirname "$0")/.."
tasks=${1:-1000}
cargo build --release --locked -p delta --bin delta >&2
cargo build --release --locked -p mock-llm --bin mock-llm >&2
bin=$PWD/target/release
work=$(mktemp -d)
trap 'kill "$mock_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"
mkdir agent
cat > agent/agent.yaml <<'YAML'
name: bench-batch
llm:
  model: gpt-4o-mini
tools:
  - name: mark
    description: Appends a mark.
    shell: "echo ${text} >> marks.txt"
YAML
echo "You mark things." > agent/system_prompt.md
cp "$OLDPWD/examples/hello-world/context.yaml" agent/
cat > script.yaml <<'YAML'
mode: by_conversation
steps:
  - message: {content: "one", tool_calls: [{name: mark, arguments: {text: a}}]}
  - message: {content: "two", tool_calls: [{name: mark, arguments: {text: b}}]}
  - message: {content: "done"}
YAML
for i in $(seq 1 "$tasks"); do printf '{"id": "t%05d", "message": "mark twice"}\n' "$i"; done > tasks.jsonl
"$bin/mock-llm" --script script.yaml > port.txt &
mock_pid=$!
for _ in $(seq 1 50); do [ -s port.txt ] && break; sleep 0.1; done
export DELTA_BASE_URL="http://127.0.0.1:$(head -1 port.txt)/v1" DELTA_API_KEY=bench

lone_start=$(date +%s.%N)
for i in 1 2 3 4 5; do "$bin/delta" run --agent agent -w "lone$i" -y -m "mark twice" --format raw >/dev/null 2>&1; done
lone=$(echo "($(date +%s.%N) - $lone_start) / 5" | bc -l)

# The driver's own peak (VmHWM), polled while it runs: getrusage(RUSAGE_CHILDREN), as
# `time -v` reports it, would be the largest of the driver and every run it started.
batch_start=$(date +%s.%N)
"$bin/delta" batch run tasks.jsonl --agent agent --out out --jobs 2 >/dev/null 2>batch.err &
driver=$!
rss=0
while ! grep -qs '^State:[[:space:]]*Z' "/proc/$driver/status" && [ -e "/proc/$driver" ]; do
  peak=$(awk '/^VmHWM:/ {print $2}' "/proc/$driver/status" 2>/dev/null || true)
  if [ -n "$peak" ] && [ "$peak" -gt "$rss" ]; then rss=$peak; fi
  sleep 0.2
done
wait "$driver"
wall=$(echo "$(date +%s.%N) - $batch_start" | bc -l)
done_count=$(grep -c COMPLETED out/results.jsonl || true)
printf 'tasks: %s (%s COMPLETED), --jobs 2\n' "$tasks" "$done_count"
printf 'wall: %.1f s, %.1f tasks/s\n' "$wall" "$(echo "$tasks / $wall" | bc -l)"
printf 'driver peak RSS: %s KiB\n' "$rss"
printf 'lone delta run of one task: %.0f ms; batch per task x jobs: %.0f ms; overhead per task: %.0f ms\n' \
  "$(echo "$lone * 1000" | bc -l)" "$(echo "$wall * 2 * 1000 / $tasks" | bc -l)" \
  "$(echo "($wall * 2 / $tasks - $lone) * 1000" | bc -l)"
