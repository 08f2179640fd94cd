#!/bin/sh
echo hello > /app/hello.txt
wc -l < /data/words.txt | tr -d ' ' > /app/count.txt
