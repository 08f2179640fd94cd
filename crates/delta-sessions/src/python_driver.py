# delta-sessions: Python session driver, run as `python3 -u -c <this file>`.
#
# Protocol (see docs/sessions.md): the holder writes frames to our stdin, each a JSON header
# line {"seq": N, "len": BYTES, "stdout": PATH, "stderr": PATH} followed by BYTES of source.
# The source runs in one persistent globals dict with fds 1 and 2 pointing at the two files
# (so child processes' output is captured too), then we write "__DELTA_DONE N STATUS\n" to
# our original stdout, which only the holder reads.
import ast
import builtins
import json
import linecache
import os
import signal
import sys
import traceback

_cmd_in = os.fdopen(os.dup(0), "rb")
_ctl = os.fdopen(os.dup(1), "wb", buffering=0)
_log_fd = os.dup(2)
_null = os.open(os.devnull, os.O_RDWR)
# User code must never read the command stream or write into the control stream.
os.dup2(_null, 0)
os.dup2(_null, 1)

_globals = {"__name__": "__main__", "__builtins__": builtins, "__doc__": None}


def _execute(source, filename):
    try:
        tree = ast.parse(source, filename, "exec")
    except (SyntaxError, ValueError) as error:
        traceback.print_exception(type(error), error, None)
        return 1
    # Like the interactive interpreter, a final expression statement echoes its repr.
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Interactive(body=[tree.body.pop()])
    try:
        # The holder sends SIGINT to stop a command that ran past its timeout: it raises
        # KeyboardInterrupt in user code only (the C handler adds no driver frame to the
        # traceback), and is ignored while the driver reads frames or writes statuses.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            exec(compile(tree, filename, "exec"), _globals)
            if last is not None:
                exec(compile(last, filename, "single"), _globals)
        finally:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        return 0
    except SystemExit as stop:
        # sys.exit() ends the command, not the session (as in a notebook).
        code = stop.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code & 0xFF
        print(code, file=sys.stderr)
        return 1
    except BaseException as error:
        sys.last_type, sys.last_value, sys.last_traceback = type(error), error, error.__traceback__
        tb = error.__traceback__
        # Drop the driver's own frames: the traceback starts in the user's code.
        while tb is not None and tb.tb_frame.f_code.co_filename != filename:
            tb = tb.tb_next
        traceback.print_exception(type(error), error, tb)
        return 130 if isinstance(error, KeyboardInterrupt) else 1


def _run(seq, source, out_path, err_path):
    filename = "<exec-%d>" % seq
    text = source.decode("utf-8", "replace")
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    out = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    err = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(out, 1)
    os.dup2(err, 2)
    os.close(out)
    os.close(err)
    try:
        return _execute(source, filename)
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os.dup2(_null, 1)
        os.dup2(_log_fd, 2)


def _main():
    while True:
        header = _cmd_in.readline()
        if not header:
            return
        frame = json.loads(header)
        source = _cmd_in.read(frame["len"])
        try:
            status = _run(frame["seq"], source, frame["stdout"], frame["stderr"])
        except KeyboardInterrupt:
            status = 130
        _ctl.write(b"__DELTA_DONE %d %d\n" % (frame["seq"], status))


signal.signal(signal.SIGINT, signal.SIG_IGN)
_ctl.write(b"__DELTA_DONE 0 0\n")  # ready
_main()
