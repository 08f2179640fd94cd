#!/bin/sh
# The oracle has /solution (it runs this file from there), so it only looks for /tests.
ls /tests > /app/seen.txt 2>&1 || true
