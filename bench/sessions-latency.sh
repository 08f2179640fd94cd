#!/usr/bin/env bash
# Round-trip latency of `delta-sessions exec SESSION 'echo hi'`, measured around the whole
# CLI call (process start, lock, socket round trip, JSON on stdout), with the release
# binary against one bash session. Prints the median (and min, p90, max) of N calls.
#
# Usage: bench/sessions-latency.sh [N]    (N defaults to 200)
set -euo pipefail
export LC_ALL=C # $EPOCHREALTIME uses the locale's decimal point

root=$(cd "$(dirname "$0")/.." && pwd)
calls=${1:-200}
cargo build --release --quiet --manifest-path "$root/Cargo.toml" --bin delta-sessions
bin="$root/target/release/delta-sessions"

work=$(mktemp -d)
sessions="$work/.sessions"
id=""
finish() {
  if [[ -n $id ]]; then "$bin" --sessions-dir "$sessions" end "$id" >/dev/null || true; fi
  rm -rf "$work"
}
trap finish EXIT

id=$("$bin" --sessions-dir "$sessions" start bash |
  sed -n 's/.*"session_id": "\(sess_[0-9a-f]*\)".*/\1/p')
reply=$("$bin" --sessions-dir "$sessions" exec "$id" 'echo hi')
if [[ $reply != *'"stdout": "hi\n"'* ]]; then
  echo "unexpected reply: $reply" >&2
  exit 1
fi

for ((i = 0; i < calls; i++)); do
  start=$EPOCHREALTIME
  "$bin" --sessions-dir "$sessions" exec "$id" 'echo hi' >/dev/null
  end=$EPOCHREALTIME
  echo "$start $end"
done |
  awk '{ printf "%.3f\n", ($2 - $1) * 1000 }' |
  sort -n |
  awk -v calls="$calls" '
    { ms[NR] = $1 }
    END {
      median = (NR % 2) ? ms[(NR + 1) / 2] : (ms[NR / 2] + ms[NR / 2 + 1]) / 2
      p90 = ms[int(NR * 0.9 + 0.5)]
      printf "delta-sessions exec round trip over %d calls (echo hi, bash, release build):\n", calls
      printf "  median %.2f ms   min %.2f ms   p90 %.2f ms   max %.2f ms\n", median, ms[1], p90, ms[NR]
    }'
