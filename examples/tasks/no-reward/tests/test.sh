#!/bin/sh
# Checks, says so, and forgets to write /logs/verifier/reward.txt.
cat /app/hello.txt 2>/dev/null || echo "no hello.txt"
