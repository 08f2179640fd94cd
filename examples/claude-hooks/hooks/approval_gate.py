#!/usr/bin/env python3
"""PreToolUse gate, Claude Code's protocol: deploys wait for a human.

A Bash command that mentions "deploy" gets permissionDecision "ask" (or "defer" when the
hook is run with --defer): Delta asks the human (-i), or pauses the run (exit 101) until
`delta continue -m yes|no` answers.
"""
import json
import sys

decision = "defer" if "--defer" in sys.argv[1:] else "ask"
event = json.load(sys.stdin)
command = str(event.get("tool_input", {}).get("command", ""))
if "deploy" in command:
    print(json.dumps({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": "deploys need a human's approval",
        }
    }))
