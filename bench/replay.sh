#!/usr/bin/env bash
# `delta replay` of a 200-iteration run (issue 17): the run is recorded once against
# mock-llm, then replayed with DELTA_BASE_URL at a closed port and no key, 5 times. Prints
# the wall time of each replay (the whole CLI call: the engine, 200 tool processes, the
# request comparisons), the time the tools took inside it, and the difference: the engine
# time. Figures, not pass/fail.
#
#   bench/replay.sh [ITERATIONS]        (default 200; builds the release binaries)
set -euo pipefail
cd "$(dirname "$0")/.."
iterations=${1:-200}
cargo build --quiet --release --locked -p delta --bin delta >&2
cargo build --quiet --release --locked -p mock-llm --bin mock-llm >&2
target_dir="$(cargo metadata --quiet --format-version 1 --no-deps \
  | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
bin="$target_dir/release"
work=$(mktemp -d "${TMPDIR:-/tmp}/delta-replay-bench.XXXXXX")
trap 'kill "$mock_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"
mkdir agent
cat > agent/agent.yaml <<'YAML'
name: bench-replay
llm:
  model: gpt-4o-mini
tools:
  - name: mark
    description: Prints a mark.
    exec: "echo ${text}"
YAML
echo "You mark things." > agent/system_prompt.md
cp "$OLDPWD/examples/hello-world/context.yaml" agent/
cat > script.yaml <<YAML
steps:
  - message:
      content: "Marking."
      tool_calls: [{name: mark, arguments: {text: step}}]
      repeat: $((iterations - 1))
  - message: {content: "done"}
YAML
"$bin/mock-llm" --script script.yaml > port.txt &
mock_pid=$!
for _ in $(seq 1 50); do [ -s port.txt ] && break; sleep 0.1; done
millis() { echo $(( $(date +%s%N) / 1000000 )); }
start=$(millis)
DELTA_BASE_URL="http://127.0.0.1:$(head -1 port.txt)/v1" DELTA_API_KEY=bench \
  "$bin/delta" run --agent agent -w ws -m "mark $iterations times" --run-id recorded \
  --max-iterations "$iterations" --format raw > /dev/null 2>&1
recording=$(( $(millis) - start ))
kill "$mock_pid"

# A port nothing listens on.
closed=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
walls=()
tools=()
engine=()
for i in 1 2 3 4 5; do
  start=$(millis)
  env -u DELTA_API_KEY -u OPENAI_API_KEY DELTA_BASE_URL="http://127.0.0.1:$closed/v1" \
    "$bin/delta" replay --run-id recorded -w ws --new-run-id "replay$i" > "out$i.txt" 2> /dev/null \
    || { echo "replay $i did not report identical:"; cat "out$i.txt"; exit 1; }
  walls+=($(( $(millis) - start )))
  tools+=($(cat ws/.delta/"replay$i"/io/tool_executions/*/duration_ms.txt 2>/dev/null \
    | awk '{ sum += $1 } END { print sum + 0 }'))
  engine+=($(( walls[-1] - tools[-1] )))
done
echo "delta replay of a $iterations-iteration run (one tool call per iteration), release build"
head -2 out1.txt | tail -1
echo "  wall time, 5 replays (ms):            ${walls[*]}"
echo "  tool processes inside them (ms):      ${tools[*]}"
echo "  engine time = wall - tools (ms):      ${engine[*]}"
echo "  (the recording itself, against mock-llm: $recording ms wall; load average $(cut -d' ' -f1 /proc/loadavg))"
