# on_error: errors go to the trail too.
set -eu
. "$(dirname "$0")/lib.sh"

append_record on_error error "${io}input/payload.dat"
