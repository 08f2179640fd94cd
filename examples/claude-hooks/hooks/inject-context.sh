#!/bin/bash
# Context injector, Claude Code's protocol, for two events:
# - SessionStart: a JSON additionalContext with the house rules (and whether the session
#   is new or resumed);
# - UserPromptSubmit: plain text on stdout, which becomes context too for this event.
input=$(cat)
case "$input" in
  *'"hook_event_name":"SessionStart"'*)
    source=$(printf '%s' "$input" | sed -n 's/.*"source":"\([a-z]*\)".*/\1/p')
    printf '{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "House rules (%s session): keep answers short; never touch .env."}}\n' "$source"
    ;;
  *'"hook_event_name":"UserPromptSubmit"'*)
    open=$(grep -c '^- \[ \]' TODO.md 2>/dev/null || true)
    echo "Open TODO items in this workspace: ${open:-0}"
    ;;
esac
exit 0
