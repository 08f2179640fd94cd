# pre_tool_execution: record the call, and refuse paths that leave the workspace.
set -eu
. "$(dirname "$0")/lib.sh"

payload="${io}input/payload.dat"
# Any JSON string that starts with / or contains ".." as a path component. Crude (the
# whole call is searched, so a review text mentioning ../ is refused too): it errs on
# the side of refusing.
if grep -Eq '"/|\.\./|"\.\."|/\.\."' "$payload"; then
  append_record pre_tool_execution blocked "$payload"
  printf '%s\n' '{"skip": true, "observation": "Refused by the audit policy: paths must stay inside the working directory (no absolute paths, no ..)."}' \
    > "${io}output/control.json"
else
  append_record pre_tool_execution allowed "$payload"
fi
