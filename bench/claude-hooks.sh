#!/usr/bin/env bash
# Claude Code hooks (issue 28): what a firing costs. One run of N tool calls against
# mock-llm, 5 times each, with no hook, with one PreToolUse hook `true` (sh -c), and with
# three stacked Python rewriters (examples/claude-hooks/hooks/tag_input.py). Prints the
# median wall time of each, the cost per firing ((wall - baseline) / firings), and how
# much of it the hook processes themselves took (the firings' duration_ms): the rest is
# the engine's (stdin, the io/claude_hooks/ record, the journal line). Figures, not
# pass/fail.
#
#   bench/claude-hooks.sh [CALLS]        (default 100; builds the release binaries)
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-100}
root=$PWD
cargo build --quiet --release --locked -p delta --bin delta >&2
cargo build --quiet --release --locked -p mock-llm --bin mock-llm >&2
target_dir="$(cargo metadata --quiet --format-version 1 --no-deps \
  | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
bin="$target_dir/release"
work=$(mktemp -d "${TMPDIR:-/tmp}/delta-claude-hooks-bench.XXXXXX")
trap 'kill "$mock_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
cd "$work"
mkdir -p agent/hooks
cp "$root/examples/claude-hooks/agent.yaml" "$root/examples/claude-hooks/context.yaml" \
  "$root/examples/claude-hooks/system_prompt.md" agent/
cp "$root/examples/claude-hooks/hooks/tag_input.py" agent/hooks/
cat > script.yaml <<YAML
mode: by_conversation
steps:
  - message:
      tool_calls: [{name: Bash, arguments: {command: "echo step"}}]
      repeat: $((calls - 1))
  - message: {content: "done"}
YAML
"$bin/mock-llm" --script script.yaml > port.txt &
mock_pid=$!
for _ in $(seq 1 50); do [ -s port.txt ] && break; sleep 0.1; done
export DELTA_BASE_URL="http://127.0.0.1:$(head -1 port.txt)/v1" DELTA_API_KEY=bench
millis() { echo $(( $(date +%s%N) / 1000000 )); }
median() { printf '%s\n' "$@" | sort -n | sed -n 3p; }
tag() { printf '{"type": "command", "command": "python3 \\"$CLAUDE_PLUGIN_ROOT\\"/hooks/tag_input.py %s"}' "$1"; }
configs=(
  "none|"
  "true|{\"hooks\": {\"PreToolUse\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"true\"}]}]}}"
  "three-python|{\"hooks\": {\"PreToolUse\": [{\"hooks\": [$(tag A), $(tag B), $(tag C)]}]}}"
)
declare -A wall hooked
for config in "${configs[@]}"; do
  name=${config%%|*}
  json=${config#*|}
  rm -f agent/hooks.json
  [ -n "$json" ] && printf '%s\n' "$json" > agent/hooks.json
  walls=() ; spent=()
  for i in 1 2 3 4 5; do
    start=$(millis)
    "$bin/delta" run --agent agent -w "ws-$name" -m "run $calls commands" --run-id "$name$i" \
      --max-iterations $((calls + 1)) --format raw > /dev/null 2>&1
    walls+=($(( $(millis) - start )))
    # grep finds nothing in the hookless runs: that is 0 ms, not a failure.
    spent+=($( { grep -o '"type":"CLAUDE_HOOK".*"duration_ms":[0-9]*' "ws-$name/.delta/$name$i/journal.jsonl" || true; } \
      | sed 's/.*"duration_ms"://' | awk '{ sum += $1 } END { print sum + 0 }'))
  done
  wall[$name]=$(median "${walls[@]}")
  hooked[$name]=$(median "${spent[@]}")
  echo "$name: wall (ms) ${walls[*]}; hook processes (ms) ${spent[*]}"
done
base=${wall[none]}
echo "$calls tool calls, release build, load average $(cut -d' ' -f1 /proc/loadavg)"
for name in true three-python; do
  firings=$calls
  [ "$name" = three-python ] && firings=$((calls * 3))
  awk -v w="${wall[$name]}" -v b="$base" -v f="$firings" -v h="${hooked[$name]}" -v n="$name" \
    'BEGIN { printf "  %-13s median wall %d ms (baseline %d): %.1f ms per firing, of which the hook process %.1f ms\n", n, w, b, (w - b) / f, h / f }'
done
