#!/usr/bin/env bash
# Map-reduce: one run per input, all at once, then one run that combines
# their results. Every run gets its id here, before it starts, so a run that crashes can
# always be found and continued.
#
#   PROCESSOR=./processor AGGREGATOR=./aggregator WORK=./work ./map-reduce.sh data/*.json
set -euo pipefail

DELTA=${DELTA:-delta}
PROCESSOR=${PROCESSOR:-./processor}
AGGREGATOR=${AGGREGATOR:-./aggregator}
WORK=${WORK:-./work}
new_id() { uuidgen 2>/dev/null || cat /proc/sys/kernel/random/uuid; }

mkdir -p "$WORK"
: > "$WORK/map_ids.txt"

# Map: every item in parallel, its result in WORK/RUN_ID.result.
pids=()
for ITEM in "$@"; do
  RUN_ID="map-$(new_id)"
  echo "$RUN_ID" >> "$WORK/map_ids.txt"
  "$DELTA" run --run-id "$RUN_ID" --agent "$PROCESSOR" -w "$WORK" -m "Process $ITEM" \
    --format raw > "$WORK/$RUN_ID.result" 2> "$WORK/$RUN_ID.log" &
  pids+=("$!")
done
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done

# A map run that did not complete (killed, out of budget) is continued once; one that
# waits for a human (exit 101) or failed is reported and left for a person.
if [ "$failed" -ne 0 ]; then
  while read -r RUN_ID; do
    if "$DELTA" list-runs -w "$WORK" --status COMPLETED --format raw | grep -qFx "$RUN_ID"; then
      continue
    fi
    "$DELTA" continue --run-id "$RUN_ID" -w "$WORK" --format raw \
      > "$WORK/$RUN_ID.result" 2>> "$WORK/$RUN_ID.log" \
      || echo "map run $RUN_ID did not complete (exit $?); see $WORK/$RUN_ID.log" >&2
  done < "$WORK/map_ids.txt"
fi

# Reduce: one run over all the results.
REDUCE_ID="reduce-$(new_id)"
"$DELTA" run --run-id "$REDUCE_ID" --agent "$AGGREGATOR" -w "$WORK" \
  -m "Combine the results in the *.result files of the workspace" --format raw
