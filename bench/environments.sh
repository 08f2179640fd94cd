#!/usr/bin/env bash
# Environment benchmarks (issue 25): added wall time per tool call in each kind against the
# host, container start and image build per run. Prints figures; nothing passes or fails.
# Release build; needs bubblewrap, podman and the image of tests/confinement/setup.sh, and
# a quiet machine (compare figures taken under the same load).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --locked --release -p delta --bin delta-sandbox
target_dir=$(cargo metadata --quiet --format-version 1 --no-deps \
  | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
# The benchmark finds delta-sandbox on PATH, as an installed engine would.
PATH="$target_dir/release:$PATH" exec cargo bench --locked --bench environments "$@"
