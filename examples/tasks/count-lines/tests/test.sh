#!/bin/sh
# Reward 1 when /app/count.txt holds the number of lines of /data/words.txt.
expected=$(wc -l < /data/words.txt | tr -d ' ')
actual=$(tr -d ' \n' 2>/dev/null < /app/count.txt)
if [ "$actual" = "$expected" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
