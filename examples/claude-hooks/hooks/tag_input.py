#!/usr/bin/env python3
"""PreToolUse rewriter for stacking, Claude Code's protocol: appends its tag to the command.

Run as `tag_input.py TAG`: logs the command it was given to tags.log (so a test can see
which input each hook saw), then answers updatedInput with " TAG" appended. With
`--deny WORD` it denies any command containing WORD instead of rewriting it.
"""
import json
import sys

args = sys.argv[1:]
tag = args[0]
deny = args[args.index("--deny") + 1] if "--deny" in args else None
event = json.load(sys.stdin)
tool_input = dict(event.get("tool_input", {}))
command = str(tool_input.get("command", ""))
with open("tags.log", "a", encoding="utf-8") as log:
    log.write(f"{tag} saw: {command}\n")
if deny and deny in command:
    answer = {"permissionDecision": "deny", "permissionDecisionReason": f"{tag}: no {deny}"}
else:
    tool_input["command"] = f"{command} {tag}"
    answer = {"permissionDecision": "allow", "updatedInput": tool_input}
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", **answer}}))
