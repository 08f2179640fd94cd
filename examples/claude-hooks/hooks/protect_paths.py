#!/usr/bin/env python3
"""PreToolUse guard, Claude Code's protocol: keeps file tools away from protected paths.

Reads the event on stdin and answers on stdout with the JSON form of a decision:
hookSpecificOutput.permissionDecision "deny" and its reason (which the model reads).
Exits 0 either way; saying nothing lets the call through.
"""
import json
import sys

PROTECTED = (".env", ".git/", "secrets/")

event = json.load(sys.stdin)
path = str(event.get("tool_input", {}).get("file_path", ""))
hit = next((part for part in PROTECTED if part in path), None)
if hit:
    print(json.dumps({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": f"{path} is protected ({hit}); write somewhere else.",
        }
    }))
