#!/usr/bin/env bash
# Checks `delta export --format otlp --otlp-endpoint` against a real Arize Phoenix, by hand
# (not run by CI: it installs Phoenix from PyPI into a virtualenv outside the repository).
#
# Starts Phoenix on 127.0.0.1, makes three hello-world runs against mock-llm (no key, no
# network): run id `same` in two workspaces, and a run whose second LLM call fails (HTTP
# 401). Posts each with the default protocol (protobuf), then asks Phoenix's REST API for
# what it stored and checks: three traces (the two `same` runs are two), LLM spans with
# input and output messages, the failed call as an LLM span in error, tool spans under the
# agent span. Prints a summary per trace; exit 1 when a check fails.
#
#   scripts/phoenix-check.sh
#
# Environment: PHOENIX_VENV (default $TMPDIR/delta-phoenix; created with `pip install
# arize-phoenix` when missing), PHOENIX_PORT (default 6006), DELTA_BIN and MOCK_LLM_BIN
# (default: target/debug, built when missing), KEEP=1 leaves Phoenix running (its UI:
# http://127.0.0.1:PORT) and the work directory in place.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${PHOENIX_VENV:-${TMPDIR:-/tmp}/delta-phoenix}"
port="${PHOENIX_PORT:-6006}"
work="$(mktemp -d "${TMPDIR:-/tmp}/delta-phoenix-check.XXXXXX")"

if [[ ! -x "$venv/bin/phoenix" ]]; then
  echo "==> installing arize-phoenix into $venv (pip, a few minutes)" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet arize-phoenix
fi
echo "==> $("$venv/bin/pip" show arize-phoenix | sed -n 's/^Version: /arize-phoenix /p')" >&2

# shellcheck source=scripts/bins.sh
source "$root/scripts/bins.sh"

PHOENIX_HOST=127.0.0.1 PHOENIX_PORT="$port" PHOENIX_WORKING_DIR="$work/phoenix" \
  "$venv/bin/phoenix" serve > "$work/phoenix.log" 2>&1 &
phoenix_pid=$!
cleanup() {
  if [[ "${KEEP:-0}" != 1 ]]; then
    kill "$phoenix_pid" 2>/dev/null || true
    wait "$phoenix_pid" 2>/dev/null || true
    rm -rf "$work"
  else
    echo "==> Phoenix left running (pid $phoenix_pid): http://127.0.0.1:$port; files in $work" >&2
  fi
}
trap cleanup EXIT
# Phoenix takes seconds to start on a quiet machine, minutes on a loaded one.
healthy() { curl -fsS "http://127.0.0.1:$port/healthz" > /dev/null 2>&1; }
for _ in $(seq 1 600); do
  healthy && break
  if ! kill -0 "$phoenix_pid" 2>/dev/null; then
    echo "phoenix did not start:" >&2
    cat "$work/phoenix.log" >&2
    exit 1
  fi
  sleep 0.5
done
if ! healthy; then
  echo "phoenix did not answer on port $port within 5 minutes:" >&2
  cat "$work/phoenix.log" >&2
  exit 1
fi
echo "==> Phoenix on http://127.0.0.1:$port" >&2

# One run of the hello-world agent against a mock-llm playing SCRIPT: WORKSPACE RUN_ID SCRIPT.
run() {
  local port_file="$work/mock.port"
  : > "$port_file"
  "$MOCK_LLM_BIN" --script "$3" --port 0 > "$port_file" 2> "$work/mock.log" &
  local mock_pid=$!
  for _ in $(seq 1 200); do [[ -s "$port_file" ]] && break; sleep 0.05; done
  DELTA_BASE_URL="http://127.0.0.1:$(head -n 1 "$port_file")/v1" \
    "$DELTA_BIN" run --agent "$root/examples/hello-world" -w "$1" --run-id "$2" -y \
    -m "Create hello.txt with a short greeting, then tell me what you did." \
    > /dev/null 2>&1 || true
  kill "$mock_pid" 2>/dev/null || true
  wait "$mock_pid" 2>/dev/null || true
  "$DELTA_BIN" export --run-id "$2" -w "$1" --format otlp \
    --otlp-endpoint "http://127.0.0.1:$port" >&2
}
cat > "$work/failing.yaml" <<'YAML'
steps:
  - message:
      content: "Looking first."
      tool_calls:
        - {name: list_files, arguments: {directory: "."}}
  - error: {status: 401}
YAML
run "$work/ws-a" same "$root/examples/hello-world/mock-script.yaml"
run "$work/ws-b" same "$root/examples/hello-world/mock-script.yaml"
run "$work/ws-c" failing "$work/failing.yaml"
sleep 2 # Phoenix writes what it received in batches.

PHOENIX_URL="http://127.0.0.1:$port" "$venv/bin/python" - <<'PY'
import json, os, sys, urllib.request
from collections import defaultdict

url = os.environ["PHOENIX_URL"] + "/v1/projects/default/spans?limit=1000"
spans = json.load(urllib.request.urlopen(url))["data"]
traces = defaultdict(list)
for span in spans:
    traces[span["context"]["trace_id"]].append(span)
failures = []
def check(ok, what):
    if not ok:
        failures.append(what)
check(len(traces) == 3, f"3 traces expected, Phoenix has {len(traces)}")
for trace_id, members in sorted(traces.items(), key=lambda t: t[1][0]["start_time"]):
    root = next(s for s in members if not s.get("parent_id"))
    attrs = lambda s: s.get("attributes", {})
    kind = lambda s: s.get("span_kind")
    llm = [s for s in members if kind(s) == "LLM"]
    tools = [s for s in members if kind(s) == "TOOL"]
    print(f"trace {trace_id}: {root['name']} ({kind(root)}, {root['status_code']}), "
          f"{len(llm)} LLM spans, {len(tools)} tool spans")
    check(kind(root) == "AGENT", f"{trace_id}: the root is not an AGENT span")
    check(all(s.get("parent_id") == root["context"]["span_id"] for s in llm + tools),
          f"{trace_id}: LLM and tool spans are not under the agent span")
    for span in sorted(llm, key=lambda s: s["start_time"]):
        a = attrs(span)
        inputs = sorted(k for k in a if k.startswith("llm.input_messages."))
        outputs = sorted(k for k in a if k.startswith("llm.output_messages."))
        first_in = a.get("llm.input_messages.0.message.role")
        last_out = a.get("llm.output_messages.0.message.content") or \
            a.get("llm.output_messages.0.message.tool_calls.0.tool_call.function.name")
        print(f"  {span['name']:<24} {span['status_code']:<6} input: {len(inputs)} attributes "
              f"(first role {first_in}), output: {last_out!r}")
        check(inputs, f"{span['name']}: no input messages")
        if span["status_code"] == "ERROR":
            check(not outputs, f"{span['name']}: a failed call with output")
        else:
            check(outputs, f"{span['name']}: no output messages")
    for span in tools:
        a = attrs(span)
        params = {k.split(".", 2)[2]: v for k, v in a.items() if k.startswith("tool.parameters.")}
        print(f"  {span['name']:<24} {span['status_code']:<6} parameters: {params} "
              f"output: {a.get('output.value')!r:.40}")
errors = [s for s in spans if s["name"].startswith("chat") and s["status_code"] == "ERROR"]
check(len(errors) == 1, f"one failed LLM span expected, {len(errors)} found")
for failure in failures:
    print("FAILED:", failure)
print("phoenix-check:", "ok" if not failures else f"{len(failures)} check(s) failed")
sys.exit(1 if failures else 0)
PY
