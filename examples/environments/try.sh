#!/usr/bin/env bash
# Runs examples/environments in one environment kind against its scripted model: the run's
# stream on stderr shows what the tool saw, call by call.
#
#   ./examples/environments/try.sh KIND [IMAGE]
#
# KIND: host, landlock, bwrap or container (IMAGE for container; default: the one in
# agent.yaml). Uses `delta` and `mock-llm` from PATH (`cargo install --locked --path
# crates/delta` and `--path crates/mock-llm`). The workspace goes to a new temporary
# directory, kept for you to inspect.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
kind="${1:?usage: try.sh KIND [IMAGE]}"
dir="$(mktemp -d "${TMPDIR:-/tmp}/delta-environments.XXXXXX")"

mock-llm --script "$here/mock-script.yaml" --port 0 > "$dir/port" 2> "$dir/mock-llm.log" &
mock_pid=$!
trap 'kill "$mock_pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 200); do
  [[ -s "$dir/port" ]] && break
  sleep 0.05
done

args=(--environment "$kind")
if [[ -n "${2:-}" ]]; then
  args+=(--environment-image "$2")
fi
DELTA_BASE_URL="http://127.0.0.1:$(head -1 "$dir/port")/v1" \
  delta run --agent "$here" -w "$dir/ws" -y -m "Look around." "${args[@]}" --format raw
echo "(the run is kept in $dir/ws)"
