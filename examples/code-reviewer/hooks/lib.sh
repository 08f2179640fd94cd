# Shared by the hook scripts: where the trail lives and how a record is appended.
# The engine runs hooks in the workspace, so audit/ is the workspace's.

audit_dir="audit"
trail="$audit_dir/tool-calls.jsonl"
io="$DELTA_HOOK_IO_PATH"
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
mkdir -p "$audit_dir"

# One line of JSON on stdout: a file the engine wrote as pretty-printed JSON, on one line.
# JSON strings never contain a raw newline, so dropping newlines keeps it valid.
one_line() {
  tr -d '\n' < "$1"
}

# Appends one record to the trail: append_record EVENT DECISION FILE
append_record() {
  printf '{"time":"%s","run_id":"%s","iteration":%s,"event":"%s","decision":"%s","data":%s}\n' \
    "$now" "$DELTA_RUN_ID" "$ITERATION_COUNT" "$1" "$2" "$(one_line "$3")" >> "$trail"
}
