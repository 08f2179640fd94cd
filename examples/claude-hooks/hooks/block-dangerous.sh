#!/bin/bash
# PreToolUse guard, Claude Code's protocol: refuses destructive shell commands.
# The event arrives as JSON on stdin; exit 2 blocks the call, and what this script writes
# to stderr is the reason the model reads. Exit 0 lets the call through.
input=$(cat)
for pattern in 'rm -rf' 'git push --force' 'mkfs' 'dd if='; do
  if [[ "$input" == *"$pattern"* ]]; then
    echo "Blocked by block-dangerous.sh: '$pattern' is not allowed here; find a way that does not destroy data." >&2
    exit 2
  fi
done
exit 0
