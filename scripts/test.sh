#!/usr/bin/env bash
# The tests, as README.md gives them and CI runs them: first the real components the tests
# drive are installed and started (tests/setup.sh; as root on a fresh machine), then every
# test of the workspace runs. Arguments go to cargo test (e.g. `-- e2e::` for one area).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/setup.sh
exec cargo test --workspace --locked "$@"
