#!/usr/bin/env bash
# Regenerates the screenshots of `delta view` in docs/images/: the page of a 30-iteration
# run (some tools failing, a question answered, a Markdown answer) and the table of a
# 50-task batch, each at a desktop's width (1,400 px) and a phone's (400 px). The runs
# are the hello-world agent against mock-llm: no key, no network.
#
#   scripts/screenshot-view.sh            (needs chromium, and pngquant to keep the images
#                                          small: apt-get install chromium pngquant)
#
# Environment: DELTA_BIN, MOCK_LLM_BIN (default: target/debug, built when missing).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
chromium="$(command -v chromium || command -v chromium-browser || true)"
if [[ -z "$chromium" ]]; then
  echo "chromium is required: apt-get install chromium" >&2
  exit 1
fi
work="$(mktemp -d "${TMPDIR:-/tmp}/delta-screenshot.XXXXXX")"
trap 'kill "${mock_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

# shellcheck source=scripts/bins.sh
source "$root/scripts/bins.sh"

# mock-llm playing SCRIPT on a free port; sets $base_url.
serve() {
  kill "${mock_pid:-}" 2>/dev/null || true
  : > "$work/port"
  "$MOCK_LLM_BIN" --script "$1" --port 0 > "$work/port" 2> "$work/mock.log" &
  mock_pid=$!
  for _ in $(seq 1 200); do [[ -s "$work/port" ]] && break; sleep 0.05; done
  base_url="http://127.0.0.1:$(head -n 1 "$work/port")/v1"
}

# The long run: 29 iterations of one tool call each (every fifth reads a file that is
# not there and fails, one asks the human), then an answer in Markdown.
{
  echo "mode: by_conversation"
  echo "models: [gpt-4o-mini]"
  echo "steps:"
  for i in $(seq 1 29); do
    if (( i == 12 )); then
      printf '  - message:\n      content: "Which heading should the report use?"\n'
      printf '      tool_calls: [{name: ask_human, arguments: {prompt: "Which heading should the report use?"}}]\n'
    elif (( i % 5 == 0 )); then
      printf '  - message:\n      content: "Reading part %d."\n' "$i"
      printf '      tool_calls: [{name: read_file, arguments: {path: "missing-%d.txt"}}]\n' "$i"
    elif (( i % 2 == 0 )); then
      printf '  - message:\n      content: "Writing part %d."\n' "$i"
      printf '      tool_calls: [{name: write_file, arguments: {path: "part-%d.txt", content: "part %d\\n"}}]\n' "$i" "$i"
    else
      printf '  - message:\n      content: "Looking at the workspace (%d)."\n' "$i"
      printf '      tool_calls: [{name: list_files, arguments: {directory: "."}}]\n'
    fi
    printf '      usage: {prompt_tokens: %d, completion_tokens: 18}\n' $((300 + i * 40))
  done
  cat <<'YAML'
  - message:
      content: "## Report\n\nWrote **16 parts**; 5 reads failed (`missing-*.txt` do not exist).\n\n| part | status |\n| --- | --- |\n| 2–28 | written |\n| 5, 10, 15, 20, 25 | not found |\n\n<script>alert('shown as text, never run')</script>"
      usage: {prompt_tokens: 1500, completion_tokens: 60}
YAML
} > "$work/long.yaml"
serve "$work/long.yaml"
echo "Report" | DELTA_BASE_URL="$base_url" "$DELTA_BIN" run --agent "$root/examples/hello-world" \
  -w "$work/long" --run-id long-run -y -i -m "Write the parts of the report, then summarize." \
  > /dev/null 2>&1 || true
page="$("$DELTA_BIN" view --run-id long-run -w "$work/long")"

# The batch: 50 tasks, every seventh with a budget too small to finish.
serve "$root/examples/hello-world/mock-script.yaml"
for i in $(seq -w 1 50); do
  if (( 10#$i % 7 == 0 )); then
    printf '{"id": "task-%s", "message": "Create hello.txt (task %s)", "max_iterations": 1}\n' "$i" "$i"
  else
    printf '{"id": "task-%s", "message": "Create hello.txt with a greeting, then say what you did (task %s)"}\n' "$i" "$i"
  fi
done > "$work/tasks.jsonl"
DELTA_BASE_URL="$base_url" "$DELTA_BIN" batch run "$work/tasks.jsonl" \
  --agent "$root/examples/hello-world" --out "$work/nightly" --jobs 2 > /dev/null 2>&1 || true
# From inside $work, so that the table's title names the batch, not the temp directory.
(cd "$work" && "$DELTA_BIN" view --batch nightly > /dev/null)
table="$work/nightly/index.html"

shoot() { # PAGE WIDTH HEIGHT OUTPUT
  "$chromium" --headless --no-sandbox --disable-gpu --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$work/profile" --hide-scrollbars --window-size="$2,$3" \
    --screenshot="$4" "file://$1" > /dev/null 2>&1
}
images="$root/docs/images"
shoot "$page" 1400 1800 "$images/view-run-1400.png"
shoot "$page" 400 1800 "$images/view-run-400.png"
shoot "$table" 1400 1000 "$images/view-batch-1400.png"
shoot "$table" 400 1200 "$images/view-batch-400.png"
# Screenshots of text quantize to a palette with no visible loss, at a third of the size.
if command -v pngquant > /dev/null; then
  for image in "$images"/view-{run,batch}-{1400,400}.png; do
    pngquant --quality=70-90 --speed 1 --strip --force --output "$image" "$image"
  done
else
  echo "pngquant not found (apt-get install pngquant): the images are left uncompressed" >&2
fi
echo "wrote docs/images/view-run-{1400,400}.png and docs/images/view-batch-{1400,400}.png"
