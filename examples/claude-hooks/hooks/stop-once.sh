#!/bin/bash
# Stop hook, Claude Code's protocol: sends the model back once before it may finish.
# stop_hook_active is true when the model already answers because of a Stop hook; then
# this hook lets it stop, so it never loops.
input=$(cat)
case "$input" in
  *'"stop_hook_active":true'*) exit 0 ;;
esac
echo '{"decision": "block", "reason": "Before you finish, list the files you changed."}'
