#!/usr/bin/env bash
# Run the hello-world agent end to end with no API key and no network.
#
# Uses `delta` and `mock-llm` from DELTA_BIN and MOCK_LLM_BIN, else from PATH (where
# `cargo install` puts them), else builds them with cargo (showing its progress); starts
# mock-llm on a free port playing mock-script.yaml, runs the agent in a fresh workspace against it, then shows the journal (with jq when it is installed) and
# stops the mock.
#
#   ./examples/hello-world/demo.sh
#
# Environment: DELTA_BIN, MOCK_LLM_BIN (prebuilt binaries), DEMO_DIR (where the
# workspace goes; default: a new temporary directory, kept for you to inspect).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

# The binaries `cargo install` put on PATH (README, Install) are used as they are: building
# the checkout again would compile every dependency a second time.
if [[ -z "${DELTA_BIN:-}" && -z "${MOCK_LLM_BIN:-}" ]] \
  && command -v delta >/dev/null 2>&1 && command -v mock-llm >/dev/null 2>&1; then
  DELTA_BIN="$(command -v delta)"
  MOCK_LLM_BIN="$(command -v mock-llm)"
  echo "==> found delta and mock-llm on PATH (set DELTA_BIN and MOCK_LLM_BIN to use others)" >&2
fi

if [[ -z "${DELTA_BIN:-}" || -z "${MOCK_LLM_BIN:-}" ]]; then
  echo "==> building delta and mock-llm (cargo build; the first build takes a few minutes)" >&2
  # The binaries live in two packages (delta-engine, mock-llm): `--bin mock-llm` alone
  # only looks in the root package, so every package's binaries are asked for.
  # crates/delta/tests/it/e2e/demo.rs checks these arguments against cargo's target selection.
  # Not --quiet: cargo's progress shows that the build is moving.
  cargo build --manifest-path "$root/Cargo.toml" --workspace --bins >&2
  # Wherever cargo puts them: CARGO_TARGET_DIR or build.target-dir may move target/.
  metadata="$(cargo metadata --quiet --format-version 1 --no-deps --manifest-path "$root/Cargo.toml")"
  target_dir="$(printf '%s' "$metadata" | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
  if [[ -z "$target_dir" ]]; then
    echo "cannot find cargo's target directory in \`cargo metadata\`" >&2
    exit 1
  fi
  DELTA_BIN="${DELTA_BIN:-$target_dir/debug/delta}"
  MOCK_LLM_BIN="${MOCK_LLM_BIN:-$target_dir/debug/mock-llm}"
fi
echo "==> using $DELTA_BIN and $MOCK_LLM_BIN" >&2

demo_dir="${DEMO_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/delta-demo.XXXXXX")}"
mkdir -p "$demo_dir"
port_file="$demo_dir/mock-llm.port"
: > "$port_file"

"$MOCK_LLM_BIN" --script "$here/mock-script.yaml" --port 0 > "$port_file" 2> "$demo_dir/mock-llm.log" &
mock_pid=$!
trap 'kill "$mock_pid" 2>/dev/null || true; wait "$mock_pid" 2>/dev/null || true' EXIT

# mock-llm prints its port on the first line of stdout once it listens.
for _ in $(seq 1 200); do
  [[ -s "$port_file" ]] && break
  if ! kill -0 "$mock_pid" 2>/dev/null; then
    echo "mock-llm did not start:" >&2
    cat "$demo_dir/mock-llm.log" >&2
    exit 1
  fi
  sleep 0.05
done
port="$(head -n 1 "$port_file")"
echo "==> mock-llm listening on 127.0.0.1:$port" >&2

workspace="$demo_dir/workspace"
echo "==> delta run --agent $here -w $workspace" >&2
status=0
DELTA_BASE_URL="http://127.0.0.1:$port/v1" \
  "$DELTA_BIN" run --agent "$here" -w "$workspace" -y \
  -m "Create hello.txt with a short greeting, then tell me what you did." || status=$?

run_dir="$(find "$workspace/.delta" -mindepth 1 -maxdepth 1 -type d | head -n 1)"
echo
echo "==> the journal: $run_dir/journal.jsonl"
if command -v jq >/dev/null 2>&1; then
  jq -c '{seq, type, payload: (.payload | {task, content, tool_name, tool_args, status, observation_content} | with_entries(select(.value != null)))}' \
    "$run_dir/journal.jsonl"
else
  cat "$run_dir/journal.jsonl"
fi
echo
echo "==> the workspace: $workspace"
ls -1 "$workspace"
exit "$status"
