#!/bin/sh
# Each check is worth half: reward.json holds the total and each check by name.
hello=0
count=0
[ "$(cat /app/hello.txt 2>/dev/null)" = "hello" ] && hello=1
[ "$(tr -d ' \n' 2>/dev/null < /app/count.txt)" = "$(wc -l < /data/words.txt | tr -d ' ')" ] && count=1
reward=$(awk -v a="$hello" -v b="$count" 'BEGIN { print (a + b) / 2 }')
printf '{"reward": %s, "hello": %s, "count": %s}\n' "$reward" "$hello" "$count" > /logs/verifier/reward.json
