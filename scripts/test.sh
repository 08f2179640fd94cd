#!/usr/bin/env bash
# The tests, as README.md gives them and CI runs them: first the real components the tests
# drive are installed and started (tests/setup.sh; as root on a fresh machine), then every
# test of the workspace runs. Arguments go to cargo test (e.g. `-- e2e::` for one area).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/setup.sh
# The tests mostly wait (on processes, containers, Slurm and the scripted LLM's delays):
# one test per core, libtest's default, left a 2-core machine half idle. Four at a time
# is what bench/README.md measured; RUST_TEST_THREADS set by the caller wins.
export RUST_TEST_THREADS="${RUST_TEST_THREADS:-4}"
exec cargo test --workspace --locked "$@"
