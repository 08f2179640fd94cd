# post_tool_execution: record the call's outcome (status, exit code, what the model saw).
set -eu
. "$(dirname "$0")/lib.sh"

append_record post_tool_execution done "${io}input/payload.dat"
