#!/usr/bin/env bash
# delta eval figures, release build (DELTA_BENCH_PROFILE=debug: the debug build, when a
# release build is out of reach), podman with the offline busybox image (tests/setup.sh);
# needs bc and jq. Usage: bench/eval.sh [TRIALS=200] [OVERHEAD_TRIALS=20]. Figures, not
# pass/fail:
#  1. orchestration overhead per trial: the wall time of a --jobs 1 eval of K trials of a
#     trivial task (the oracle), per trial, less what each trial measured for its image,
#     its container and solve.sh, its verifier and its container's removal;
#  2. container start + verifier overhead per trial: those phases themselves (solve.sh and
#     test.sh do nothing);
#  3. N trials (default 200) of the trivial task with a scripted agent answering at once,
#     --jobs 2: trials per minute and the driver's peak RSS (VmHWM, polled);
#  4. the same command again on the finished eval: wall time, trials started, builds.
set -euo pipefail
cd "$(dirname "$0")/.."
trials=${1:-200}
overhead_trials=${2:-20}
if [ "${DELTA_BENCH_PROFILE:-release}" = debug ]; then
  cargo build --locked -p delta --bin delta -p mock-llm --bin mock-llm >&2
  bin=$PWD/target/debug
else
  cargo build --release --locked -p delta --bin delta -p mock-llm --bin mock-llm >&2
  bin=$PWD/target/release
fi
echo "binaries: $bin"
podman image exists localhost/delta-busybox:latest || {
  echo "localhost/delta-busybox:latest is missing: run tests/setup.sh as root" >&2
  exit 1
}
work=$(mktemp -d)
mock_pid=
trap '[ -z "$mock_pid" ] || kill "$mock_pid" 2>/dev/null; rm -rf "$work"' EXIT
cd "$work"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

mkdir -p tasks/trivial/tests tasks/trivial/solution agent
cat > tasks/trivial/task.toml <<'TOML'
[environment]
docker_image = "localhost/delta-busybox:latest"
workdir = "/app"
TOML
echo "Answer." > tasks/trivial/instruction.md
printf '#!/bin/sh\necho 1 > /logs/verifier/reward.txt\n' > tasks/trivial/tests/test.sh
printf '#!/bin/sh\ntrue\n' > tasks/trivial/solution/solve.sh
chmod +x tasks/trivial/tests/test.sh tasks/trivial/solution/solve.sh
cat > agent/agent.yaml <<'YAML'
name: bench-eval
llm:
  model: gpt-4o-mini
tools:
  - name: sh
    description: Run a command.
    exec: "sh -c ${command}"
YAML
echo "You answer." > agent/system_prompt.md
cp "$OLDPWD/examples/eval-agent/context.yaml" agent/
cat > script.yaml <<'YAML'
mode: by_conversation
steps:
  - message: {content: "done"}
YAML
"$bin/mock-llm" --script script.yaml > port.txt &
mock_pid=$!
for _ in $(seq 1 50); do [ -s port.txt ] && break; sleep 0.1; done
export DELTA_BASE_URL="http://127.0.0.1:$(head -1 port.txt)/v1" DELTA_API_KEY=bench

# Means over results.jsonl of the phases each trial measured, in ms (needs jq).
phases() {
  jq -rs 'map(.durations_ms) | [.[0] | keys_unsorted[]] as $k
    | [ $k[] as $p | (map(.[$p]) | add / length) ] | @tsv' "$1"
}

# 1 and 2: the oracle, one trial at a time.
start=$(date +%s.%N)
"$bin/delta" eval run tasks --oracle --out overhead -k "$overhead_trials" --jobs 1 >/dev/null 2>overhead.err
wall=$(echo "$(date +%s.%N) - $start" | bc -l)
# keys in order: build agent verifier cleanup total
read -r build agent verifier cleanup total <<< "$(phases overhead/results.jsonl)"
per_trial=$(echo "$wall * 1000 / $overhead_trials" | bc -l)
printf 'oracle, %s trials, --jobs 1: %.0f ms per trial; inside it build %.0f, container start + solve.sh %.0f, verifier %.0f, container removal %.0f ms\n' \
  "$overhead_trials" "$per_trial" "$build" "$agent" "$verifier" "$cleanup"
printf 'orchestration overhead per trial (driver, trial process, workspace, verdict): %.0f ms\n' \
  "$(echo "$per_trial - $build - $agent - $verifier - $cleanup" | bc -l)"
printf '  of which inside the trial process (total - phases): %.0f ms\n' \
  "$(echo "$total - $build - $agent - $verifier - $cleanup" | bc -l)"
# The first trial of an image also extracts its workdir (once per image): the median
# shows a trial without it.
printf '  median inside the trial process, the once-per-image workdir extraction left out: %s ms\n' \
  "$(jq -s '[.[] | .durations_ms | .total - .build - .agent - .verifier - .cleanup] | sort | .[length / 2 | floor]' overhead/results.jsonl)"
printf 'container start + verifier overhead per trial: %.0f ms (start + solve.sh %.0f, verifier %.0f, removal %.0f)\n' \
  "$(echo "$agent + $verifier + $cleanup" | bc -l)" "$agent" "$verifier" "$cleanup"

# 3: N trials with the scripted agent, --jobs 2, the driver's own peak RSS.
start=$(date +%s.%N)
"$bin/delta" eval run tasks --agent agent --out many -k "$trials" --jobs 2 >/dev/null 2>many.err &
driver=$!
rss=0
while ! grep -qs '^State:[[:space:]]*Z' "/proc/$driver/status" && [ -e "/proc/$driver" ]; do
  peak=$(awk '/^VmHWM:/ {print $2}' "/proc/$driver/status" 2>/dev/null || true)
  if [ -n "$peak" ] && [ "$peak" -gt "$rss" ]; then rss=$peak; fi
  sleep 0.2
done
wait "$driver"
wall=$(echo "$(date +%s.%N) - $start" | bc -l)
passed=$(grep -c '"status":"passed"' many/results.jsonl || true)
printf '%s trials with an agent, --jobs 2: %.1f s, %.1f trials/min (%s passed); driver peak RSS %s KiB\n' \
  "$trials" "$wall" "$(echo "$trials * 60 / $wall" | bc -l)" "$passed" "$rss"
printf '  median inside each trial process besides its phases: %s ms\n' \
  "$(jq -s '[.[] | .durations_ms | .total - .build - .agent - .verifier - .cleanup] | sort | .[length / 2 | floor]' many/results.jsonl)"

# 4: the finished eval again.
images_before=$(podman images -q | wc -l)
start=$(date +%s.%N)
"$bin/delta" eval run tasks --agent agent --out many -k "$trials" --jobs 2 >/dev/null 2>rerun.err
wall=$(echo "$(date +%s.%N) - $start" | bc -l)
printf 're-run of the finished eval: %.2f s; %s; images before and after: %s, %s\n' \
  "$wall" "$(head -1 rerun.err)" "$images_before" "$(podman images -q | wc -l)"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
