#!/usr/bin/env bash
# Installs and starts the real components the tests drive, on a fresh machine of this
# project's kind (Debian, root): Chromium (`delta view` pages), jq (the documented
# commands), a single-node Slurm cluster (batch on Slurm), bubblewrap, runc and podman
# with an offline base image (confined tools), and the MCP reference server from its
# lockfile. Idempotent: what is there is left as it is.
#
# Without root nothing is installed system-wide: every missing component is listed with
# the tests that need it, and those tests fail, naming it.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages, by the command that shows each is installed.
packages=(
  chromium:chromium
  jq:jq
  slurmctld:slurmctld slurmd:slurmd sinfo:slurm-client munged:munge
  bwrap:bubblewrap podman:podman runc:runc busybox:busybox-static catatonit:catatonit
)
missing=()
for entry in "${packages[@]}"; do
  command -v "${entry%%:*}" > /dev/null 2>&1 || [ -x "/usr/sbin/${entry%%:*}" ] \
    || [ -x "/usr/libexec/podman/${entry%%:*}" ] || missing+=("${entry#*:}")
done

if [ "$(id -u)" -eq 0 ]; then
  if [ ${#missing[@]} -gt 0 ]; then
    echo "tests/setup.sh: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q > /dev/null
    # runc named: podman depends on "crun | runc", and crun fails on this kernel.
    apt-get install -y -q --no-install-recommends "${missing[@]}" > /dev/null
  fi
  bash tests/slurm/start-cluster.sh > /dev/null
  bash tests/confinement/setup.sh
elif [ ${#missing[@]} -gt 0 ]; then
  cat >&2 <<MSG
tests/setup.sh: not root, so these Debian packages are not installed: ${missing[*]}
  chromium             crates/delta/tests/it/export/view.rs (the page in a real browser)
  jq                   crates/delta/tests/it/e2e/docs_commands.rs, resume/orchestration.rs
  slurm*, munge        crates/delta/tests/it/batch (--executor slurm)
  bubblewrap, podman…  the tests of confined tools
Those tests will fail. Install them, or run this script as root once.
MSG
fi

# Harbor's ATIF validator (crates/delta/tests/it/subagents/export_view.rs), pinned, in a
# venv under target/ (no root needed). It needs Python 3.12; only the validator's own
# dependency (pydantic) is installed, not Harbor's run-time ones.
harbor_venv=target/harbor-venv
if ! "$harbor_venv/bin/python" -c 'import harbor.utils.trajectory_validator' > /dev/null 2>&1; then
  # A pyenv shim may exist without its version being selected: try each until one runs.
  python312=
  for candidate in "$(command -v python3.12 || true)" \
    $(ls "$(pyenv root 2> /dev/null || echo /nonexistent)"/versions/3.12*/bin/python3.12 2> /dev/null || true); do
    if [ -n "$candidate" ] && "$candidate" -c 'import sys; assert sys.version_info >= (3, 12)' > /dev/null 2>&1; then
      python312=$candidate
      break
    fi
  done
  if [ -z "$python312" ]; then
    echo "tests/setup.sh: Python 3.12 is missing; the ATIF validator test (crates/delta/tests/it/subagents/export_view.rs) will fail" >&2
  else
    "$python312" -m venv "$harbor_venv"
    "$harbor_venv/bin/pip" install -q --no-deps harbor==0.26.0
    "$harbor_venv/bin/pip" install -q --no-warn-conflicts 'pydantic>=2.14'
  fi
fi

# The official MCP test server, exactly as its lockfile pins it (no root needed).
if ! command -v npm > /dev/null 2>&1; then
  echo "tests/setup.sh: npm is missing; the MCP tests (crates/delta/tests/it/e2e/mcp.rs) will fail" >&2
elif ! cmp -s tests/mcp-server/package-lock.json tests/mcp-server/node_modules/.delta-lock; then
  # npm ci starts from an empty node_modules; the copy of the lockfile it was installed
  # from tells the next run there is nothing to do.
  (cd tests/mcp-server && npm ci --no-audit --no-fund --loglevel=error > /dev/null \
    && cp package-lock.json node_modules/.delta-lock)
fi
