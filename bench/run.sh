#!/usr/bin/env bash
# Engine benchmarks: loop overhead per iteration and context rebuild time.
# Prints figures; nothing here passes or fails. Uses the release profile.
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo bench --locked --bench engine "$@"
