#!/usr/bin/env python3
"""PostToolUse formatter, Claude Code's protocol: tidies Markdown files after each write.

After a successful write of a .md file: trailing spaces removed, one final newline, and a
line on stdout (for the log, not the model). After a failed call (the event has "error"),
answers decision "block" with a reason, which the model reads beside the failure.
"""
import json
import pathlib
import sys

event = json.load(sys.stdin)
error = event.get("error")
if error:
    first = error.strip().splitlines()[0] if error.strip() else "no message"
    print(json.dumps({
        "decision": "block",
        "reason": f"The {event.get('tool_name')} call failed ({first}); check the path and try again.",
    }))
    sys.exit(0)
path = pathlib.Path(str(event.get("tool_input", {}).get("file_path", "")))
if path.suffix in (".md", ".mdx") and path.is_file():
    lines = [line.rstrip() for line in path.read_text().splitlines()]
    path.write_text("\n".join(lines).rstrip("\n") + "\n")
    print(f"✓ Formatted {path}")
