#!/bin/sh
# Sleeps far past [verifier] timeout_sec = 2.
sleep 60
echo 1 > /logs/verifier/reward.txt
