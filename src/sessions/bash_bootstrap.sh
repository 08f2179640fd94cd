# delta-sessions: bash session bootstrap, written once to the shell's standard input.
#
# Each command then arrives as one line:
#   __delta_pre; { . CMD_FILE; } </dev/null >OUT_FILE 2>ERR_FILE; __delta_done SEQ $?
# so it runs in this shell itself (cd, variables, functions, aliases and options persist) and
# __delta_done reports "__DELTA_DONE SEQ STATUS" on the shell's own stdout, which only the
# holder reads. The helpers below are named __delta_* and must stay; see docs/sessions.md.

# Aliases are off in non-interactive shells; sessions behave like a terminal here.
shopt -s expand_aliases
# errtrace: the ERR trap below must also fire inside functions (see __delta_on_err).
set -E

# DEBUG trap used while a command is being stopped: from any command inside the user's code
# (a function or the sourced command file), simulate `return` (extdebug's status 2); at the
# top level and in these helpers, let commands run.
__delta_unwind() {
  case ${FUNCNAME[1]-} in
    '' | main | __delta_*) return 0 ;;
  esac
  return 2
}

# Starts unwinding the running command: SIGUSR1 from the holder on timeout, or errexit.
__delta_arm() {
  if [[ -n ${__delta_armed-} ]]; then return 0; fi
  __delta_saved_flags=$-
  __delta_saved_debug=$(trap -p DEBUG)
  if shopt -q extdebug; then
    __delta_armed=kept
  else
    __delta_armed=set
    shopt -s extdebug
  fi
  trap __delta_unwind DEBUG
}

__delta_disarm() {
  if [[ -n ${__delta_saved_debug-} ]]; then eval "$__delta_saved_debug"; else trap - DEBUG; fi
  if [[ ${__delta_armed-} == set ]]; then
    # Leaving extdebug also clears functrace and errtrace: put back what was set before.
    shopt -u extdebug
    case $__delta_saved_flags in *T*) set -T ;; esac
    case $__delta_saved_flags in *E*) set -E ;; esac
  fi
  unset __delta_armed __delta_saved_debug __delta_saved_flags
}

# `set -e` would make the whole shell exit on a failure, ending the session. Instead the
# failing command stops (as a script would) and the session stays: the ERR trap runs before
# errexit is checked, switches errexit off, remembers the status and unwinds. errexit is
# switched back on before the next command, so `set -o` still shows what the user set.
# Subshells keep real errexit semantics ($BASHPID differs there).
__delta_on_err() {
  local __delta_status=$?
  if [[ $- == *e* && $BASHPID == "$$" ]]; then
    set +e
    __delta_errexit=$__delta_status
    __delta_arm
  fi
  return "$__delta_status"
}

# Runs before each command: clears a late interrupt, restores errexit, and passes on $? so
# `echo $?` sees the previous command's status (unless errexit is on, where it is 0).
__delta_pre() {
  local __delta_status=$?
  if [[ -n ${__delta_armed-} ]]; then __delta_disarm; fi
  if [[ -n ${__delta_errexit_on-} ]]; then
    unset __delta_errexit_on
    set -e
    return 0
  fi
  return "$__delta_status"
}

__delta_done() {
  local __delta_status=$2
  if [[ -n ${__delta_errexit-} ]]; then
    __delta_status=$__delta_errexit
    unset __delta_errexit
    __delta_errexit_on=1
  fi
  case $- in
    *e*)
      set +e
      __delta_errexit_on=1
      ;;
  esac
  if [[ -n ${__delta_armed-} ]]; then __delta_disarm; fi
  trap __delta_arm USR1
  printf '__DELTA_DONE %s %s\n' "$1" "$__delta_status"
  return "$__delta_status"
}

trap __delta_on_err ERR
