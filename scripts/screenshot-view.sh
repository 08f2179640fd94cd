#!/usr/bin/env bash
# Regenerates docs/images/view-hello-world.png: runs the hello-world example against
# mock-llm (examples/hello-world/demo.sh: no key, no network), writes its page with
# `delta view`, and photographs it with headless Chromium at a phone's width and a
# desktop's.
#
#   scripts/screenshot-view.sh            (needs chromium: apt-get install chromium)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
chromium="$(command -v chromium || command -v chromium-browser || true)"
if [[ -z "$chromium" ]]; then
  echo "chromium is required: apt-get install chromium" >&2
  exit 1
fi
work="$(mktemp -d "${TMPDIR:-/tmp}/delta-screenshot.XXXXXX")"
trap 'rm -rf "$work"' EXIT

DEMO_DIR="$work/demo" "$root/examples/hello-world/demo.sh" > /dev/null 2>&1
target_dir="$(cargo metadata --quiet --format-version 1 --no-deps --manifest-path "$root/Cargo.toml" \
  | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
delta="${DELTA_BIN:-$target_dir/debug/delta}"
workspace="$work/demo/workspace"
run_id="$("$delta" list-runs -w "$workspace" --first)"
page="$("$delta" view --run-id "$run_id" -w "$workspace")"

shoot() { # WIDTH HEIGHT OUTPUT
  "$chromium" --headless --no-sandbox --disable-gpu --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$work/profile" --hide-scrollbars --window-size="$1,$2" \
    --screenshot="$3" "file://$page" > /dev/null 2>&1
}
shoot 900 1400 "$root/docs/images/view-hello-world.png"
shoot 412 915 "$root/docs/images/view-hello-world-phone.png"
echo "wrote docs/images/view-hello-world.png and docs/images/view-hello-world-phone.png"
