PS1='' PS2='' # (first, so that the lines below print no prompts into holder.log)
# delta-sessions: bash session bootstrap, written once to the standard input of
# `bash --norc --noprofile --noediting -i`. See docs/sessions.md for the design.
#
# Each command then arrives as one line (the holder writes it; `…` is the DEBUG clean-up
# below):
#   __delta_pre SEQ; …; __delta_resume; { . CMD_FILE; } </dev/null >OUT_FILE 2>ERR_FILE
# so it runs in this shell itself (cd, variables, functions, aliases and options persist).
# When bash is back at its prompt, PROMPT_COMMAND reports "__DELTA_DONE SEQ STATUS" on the
# shell's own stdout, which only the holder reads.
#
# The shell is interactive for one reason: a fatal error (an unset variable under `set -u`,
# `${v:?}`) makes a non-interactive shell exit, and an interactive one only abandon the
# line; the prompt, and so the marker, still comes.
#
# A DEBUG trap cannot be removed from inside a function (bash restores it when the function
# returns), so the helpers only set __delta_drop_debug, and `trap - DEBUG` runs at the top
# level: in PROMPT_COMMAND and on the request line.
#
# The helpers are named __delta_*, are read-only, and must stay.

unset PS0 HISTFILE
set +o history +o histexpand
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
  if [[ -n ${__delta_saved_debug-} ]]; then
    eval "$__delta_saved_debug"
  else
    __delta_drop_debug=1
  fi
  if [[ ${__delta_armed-} == set ]]; then
    # Leaving extdebug also clears functrace and errtrace: put back what was set before.
    shopt -u extdebug
    case $__delta_saved_flags in *T*) set -T ;; esac
    case $__delta_saved_flags in *E*) set -E ;; esac
  fi
  unset __delta_armed __delta_saved_debug __delta_saved_flags
}

# errexit is emulated. With the real `set -e`, bash exits (ending the session) on the first
# failing command, and also on any expansion error (an unset variable under `set -u`):
# report_error() exits the shell whenever errexit is on, interactive or not. So the real
# option is off while commands run, and __delta_errexit_on stands for it:
# - `set` is an alias that brackets each call with a one-shot DEBUG hook. Just before the
#   call the real option takes the emulated value (so `set -o` shows it and `set +e` clears
#   it); just after, its value moves into the flag and the real option goes off again.
# - The ERR trap (fired on the same failures errexit reacts to) stops the command: in the
#   shell itself by unwinding it (the session stays, the status is the failure's); in a
#   subshell by exiting it, as inherited errexit would.
__delta_set_hook() {
  if [[ ${__delta_set_pending-} == 1 ]]; then
    # Just before `set`.
    __delta_set_pending=2
    if [[ -n ${__delta_errexit_on-} ]]; then builtin set -e; fi
    return 0
  fi
  # Just after: the trap's own `|| trap - DEBUG` removes the hook.
  __delta_set_done
  unset __delta_drop_debug
  return 1
}

# After a `set` (and before each prompt): the real errexit moves into the flag. Only right
# after a bracketed `set` does a real errexit that is off clear the flag: that `set` began
# with the real option equal to the flag, so off means the user switched it off.
__delta_set_done() {
  if [[ -n ${__delta_set_pending-} ]]; then
    if [[ $__delta_set_pending == 2 && $- != *e* ]]; then unset __delta_errexit_on; fi
    unset __delta_set_pending
    __delta_drop_debug=1
  fi
  case $- in
    *e*)
      builtin set +e
      __delta_errexit_on=1
      ;;
  esac
  # The emulation needs the ERR trap: under errexit it replaces one of the user's.
  if [[ -n ${__delta_errexit_on-} ]]; then trap __delta_on_err ERR; fi
}

__delta_on_err() {
  local __delta_status=$?
  if [[ $BASHPID != "$$" ]]; then
    if [[ -n ${__delta_errexit_on-} ]]; then exit "$__delta_status"; fi
    return "$__delta_status"
  fi
  case $- in
    *e*)
      builtin set +e
      __delta_errexit_on=1
      ;;
  esac
  if [[ -n ${__delta_errexit_on-} && -z ${__delta_errexit-} ]]; then
    __delta_errexit=$__delta_status
    __delta_arm
  fi
  return "$__delta_status"
}

# `exit` in the shell itself ends the command, not the session: the seed's design (a fresh
# shell per command around the user's code) reports `exit N` as the command's status N and
# keeps the session, and an agent that types `exit` to leave a script must not lose its
# shell. So `exit` is a function: in a subshell (`( … )`, `$( … )`, a pipeline) it is the
# builtin; in the shell it works out the status the builtin would exit with (in a subshell,
# so the messages and the rules for bad arguments are bash's own) and unwinds the command
# as a timeout does. What the command changed before `exit` stays.
exit() {
  local __delta_status=$?
  if [[ $BASHPID != "$$" ]]; then
    if (($#)); then builtin exit "$@"; fi
    builtin exit "$__delta_status"
  fi
  __delta_exit "$__delta_status" "$@"
}

__delta_exit() {
  local __delta_status=$1
  shift
  if (($#)); then
    (builtin exit "$@") && __delta_status=0 || __delta_status=$?
  fi
  __delta_exited=$__delta_status
  __delta_arm
}

# First on each request line: records its sequence number and clears a late interrupt.
__delta_pre() {
  __delta_seq=$1
  if [[ -n ${__delta_armed-} ]]; then __delta_disarm; fi
}

# Last before the command: hands on the previous command's status, so `echo $?` sees it as
# at a prompt (under errexit it is 0, since a failure would have stopped that command).
__delta_resume() {
  if [[ -n ${__delta_errexit_on-} ]]; then return 0; fi
  return "${__delta_last_status:-0}"
}

# First in PROMPT_COMMAND, which runs whenever bash is back at its prompt, however the line
# ended: works out the command's status and tidies up.
__delta_settle() {
  __delta_status=$?
  if [[ -n ${__delta_armed-} ]]; then __delta_disarm; fi
  __delta_set_done
  if [[ -n ${__delta_errexit-} ]]; then
    __delta_status=$__delta_errexit
    unset __delta_errexit
  fi
  # Last: unwinding after `exit` may have tripped the errexit emulation on its way out.
  if [[ -n ${__delta_exited-} ]]; then
    __delta_status=$__delta_exited
    unset __delta_exited
  fi
}

__delta_report() {
  trap __delta_arm USR1
  __delta_last_status=$__delta_status
  printf '__DELTA_DONE %s %s\n' "${__delta_seq:-0}" "$__delta_status"
}

trap __delta_on_err ERR
readonly -f __delta_unwind __delta_arm __delta_disarm __delta_set_hook __delta_set_done \
  __delta_on_err __delta_exit __delta_pre __delta_resume __delta_settle __delta_report exit
alias set='__delta_set_pending=1; trap "__delta_set_hook || trap - DEBUG" DEBUG; set'
# Last: from the next prompt on, every prompt reports; this one reports request 0 (ready).
readonly PROMPT_COMMAND='__delta_settle; if [[ -n ${__delta_drop_debug-} ]]; then trap - DEBUG; unset __delta_drop_debug; fi; __delta_report'
