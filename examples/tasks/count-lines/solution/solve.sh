#!/bin/sh
wc -l < /data/words.txt | tr -d ' ' > /app/count.txt
