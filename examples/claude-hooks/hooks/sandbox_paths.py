#!/usr/bin/env python3
"""PreToolUse rewriter, Claude Code's protocol: every file a tool writes goes under sandbox/.

Answers with permissionDecision "allow" and updatedInput: the whole tool input, with
file_path moved under sandbox/ (updatedInput replaces the input, so every field is kept).
"""
import json
import os
import sys

event = json.load(sys.stdin)
tool_input = dict(event.get("tool_input", {}))
path = str(tool_input.get("file_path", ""))
if path and not path.startswith("sandbox/"):
    tool_input["file_path"] = "sandbox/" + path.lstrip("/")
    # The hook runs in the workspace (cwd), as the tool will.
    os.makedirs(os.path.dirname(tool_input["file_path"]), exist_ok=True)
    print(json.dumps({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": "writes stay in sandbox/",
            "updatedInput": tool_input,
        }
    }))
