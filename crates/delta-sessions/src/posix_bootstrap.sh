# delta-sessions: bootstrap for POSIX shells other than bash, written once to the shell's
# standard input. Each command then arrives as one line:
#   { . CMD_FILE; } </dev/null >OUT_FILE 2>ERR_FILE; __delta_done SEQ $?
# and __delta_done reports "__DELTA_DONE SEQ STATUS" on the shell's own stdout.
__delta_done() {
  printf '__DELTA_DONE %s %s\n' "$1" "$2"
  return "$2"
}
__delta_done 0 0
