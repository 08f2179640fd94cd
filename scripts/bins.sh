# Sourced by the scripts that drive `delta` and `mock-llm` (screenshot-view.sh,
# phoenix-check.sh): sets DELTA_BIN and MOCK_LLM_BIN, building the workspace's debug
# binaries unless both are given. Needs $root, the repository's root.
if [[ -z "${DELTA_BIN:-}" || -z "${MOCK_LLM_BIN:-}" ]]; then
  cargo build --quiet --manifest-path "$root/Cargo.toml" --workspace --bins
  target_dir="$(cargo metadata --quiet --format-version 1 --no-deps --manifest-path "$root/Cargo.toml" \
    | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
  DELTA_BIN="${DELTA_BIN:-$target_dir/debug/delta}"
  MOCK_LLM_BIN="${MOCK_LLM_BIN:-$target_dir/debug/mock-llm}"
fi
