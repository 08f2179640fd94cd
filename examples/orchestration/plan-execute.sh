#!/usr/bin/env bash
# Plan-execute: a planner run answers with a JSON plan
# {"steps": ["…", …]}; every step becomes an executor run, all at once. Needs jq.
#
#   PLANNER=./planner EXECUTOR=./executor WORK=./work ./plan-execute.sh "Design the system"
set -euo pipefail

DELTA=${DELTA:-delta}
PLANNER=${PLANNER:-./planner}
EXECUTOR=${EXECUTOR:-./executor}
WORK=${WORK:-./work}
GOAL=$1
new_id() { uuidgen 2>/dev/null || cat /proc/sys/kernel/random/uuid; }

mkdir -p "$WORK"
PLAN_ID="plan-$(new_id)"
# --format raw prints a JSON result as one compact line: the plan itself.
PLAN=$("$DELTA" run --run-id "$PLAN_ID" --agent "$PLANNER" -w "$WORK" --format raw \
  -m "$GOAL. Answer with JSON only: {\"steps\": [\"step 1\", \"step 2\"]}" 2> "$WORK/$PLAN_ID.log")

: > "$WORK/step_ids.txt"
pids=()
while IFS= read -r STEP; do
  STEP_ID="step-$(new_id)"
  echo "$STEP_ID" >> "$WORK/step_ids.txt"
  "$DELTA" run --run-id "$STEP_ID" --agent "$EXECUTOR" -w "$WORK" -m "$STEP" \
    --format json > "$WORK/$STEP_ID.json" 2> "$WORK/$STEP_ID.log" &
  pids+=("$!")
done < <(printf '%s\n' "$PLAN" | jq -r '.steps[]')

status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
# Each step's RunResult: status, result or error.
jq -c '{run_id, status}' "$WORK"/step-*.json
exit "$status"
