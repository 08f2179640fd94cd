#!/bin/sh
# Reward 1 when /app/hello.txt holds exactly "hello", else 0.
if [ "$(cat /app/hello.txt 2>/dev/null)" = "hello" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
