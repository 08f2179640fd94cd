# on_run_end: one summary line per run in audit/runs.log.
set -eu
. "$(dirname "$0")/lib.sh"

calls=$(grep -c "\"run_id\":\"$DELTA_RUN_ID\",[^}]*\"event\":\"post_tool_execution\"" "$trail" 2>/dev/null || true)
blocked=$(grep -c "\"run_id\":\"$DELTA_RUN_ID\",[^}]*\"decision\":\"blocked\"" "$trail" 2>/dev/null || true)
printf '%s run=%s status=%s iterations=%s tool_calls=%s blocked=%s\n' \
  "$now" "$DELTA_RUN_ID" "$RUN_STATUS" "$ITERATION_COUNT" "${calls:-0}" "${blocked:-0}" \
  >> "$audit_dir/runs.log"
