#!/usr/bin/env bash
# MCP figures against the official test server (tests/mcp-server, `npm ci` first):
#  1. `delta tool expand` of an agent with server-everything over stdio: start the server,
#     handshake, list its tools, stop it (whole CLI call, wall time);
#  2. one run making N `echo` calls (one per iteration, against mock-llm): the
#     duration_ms.txt of each call, i.e. request to result through rmcp and the pipes.
# Usage: bench/mcp.sh [RUNS=5] [CALLS=20]   (release build; a quiet machine)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
calls=${2:-20}
cargo build --release --locked -p delta -p mock-llm --bin delta --bin mock-llm >/dev/null 2>&1
js="$PWD/tests/mcp-server/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
[ -f "$js" ] || { echo "run npm ci in tests/mcp-server first" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'kill "${mock_pid:-}" 2>/dev/null || true; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/agent"
cat > "$tmp/agent/agent.yaml" <<YAML
name: mcp-bench
llm: {model: bench}
mcp_servers:
  everything:
    command: [node, "$js", stdio]
YAML
echo "You are a benchmark." > "$tmp/agent/system_prompt.md"
printf 'sources:\n  - {type: file, path: system_prompt.md}\n  - {type: journal}\n' > "$tmp/agent/context.yaml"

echo "delta tool expand (start + list + stop), ms:"
for _ in $(seq "$runs"); do
  start=$(date +%s%N)
  target/release/delta tool expand "$tmp/agent" >/dev/null
  echo $(( ($(date +%s%N) - start) / 1000000 ))
done | sort -n | tr '\n' ' '
echo

# by_conversation: step index = tool messages so far; make steps 0..calls-1 call echo.
python3 - "$tmp/script.yaml" "$calls" <<'PY'
import sys
path, calls = sys.argv[1], int(sys.argv[2])
steps = ["  - message: {tool_calls: [{name: everything__echo, arguments: {message: hi}}]}"] * calls
open(path, "w").write("mode: by_conversation\nsteps:\n" + "\n".join(steps) + "\n  - message: {content: done}\n")
PY
target/release/mock-llm --script "$tmp/script.yaml" > "$tmp/port" 2>/dev/null &
mock_pid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
DELTA_BASE_URL="http://127.0.0.1:$(head -1 "$tmp/port")/v1" DELTA_API_KEY=bench \
  target/release/delta run --agent "$tmp/agent" -w "$tmp/ws" -m go --max-iterations $((calls + 1)) >/dev/null 2>&1
echo "echo call, duration_ms.txt over $calls calls (sorted):"
cat "$tmp"/ws/.delta/*/io/tool_executions/*/duration_ms.txt | sort -n | tr '\n' ' '
echo
