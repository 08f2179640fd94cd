//! `delta-sandbox`: the helper that holds a run's confinement (docs/environments.md). The
//! engine starts `delta-sandbox keep` once per run (restricted with Landlock, or inside the
//! run's bubblewrap sandbox) and runs every tool call as `delta-sandbox call`; the logic is
//! `delta_engine::environment`'s, this file only reads the arguments.

// The command line renders; printing is denied everywhere else in the workspace.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use delta_engine::environment::{CallEnd, KeepOptions, LandlockRules, call, keep};
use nix::sys::signal::{Signal, raise};

const USAGE: &str = "usage: delta-sandbox keep --socket PATH [--landlock RULES_JSON]\n       \
                     delta-sandbox call --socket PATH --cwd DIR -- COMMAND [ARGS...]\n\n\
                     Started by delta for runs with `environment: landlock` or `bwrap`; not \
                     meant to be run by hand.";

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let Some(command) = args.next() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let mut socket = None;
    let mut cwd = None;
    let mut landlock = None;
    let mut argv: Vec<OsString> = Vec::new();
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--socket") => socket = args.next().map(PathBuf::from),
            Some("--cwd") => cwd = args.next().map(PathBuf::from),
            Some("--landlock") => landlock = args.next(),
            Some("--") => {
                argv = args.by_ref().collect();
                break;
            }
            Some("--help" | "-h") => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            Some("--version" | "-V") => {
                println!("delta-sandbox {}", env!("CARGO_PKG_VERSION"));
                return ExitCode::SUCCESS;
            }
            _ => {
                eprintln!("delta-sandbox: unexpected argument {arg:?}\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let Some(socket) = socket else {
        eprintln!("delta-sandbox: --socket is required\n{USAGE}");
        return ExitCode::from(2);
    };
    match command.to_str() {
        Some("keep") => {
            let landlock = match landlock
                .map(|json| serde_json::from_str::<LandlockRules>(&json.to_string_lossy()))
            {
                None => None,
                Some(Ok(rules)) => Some(rules),
                Some(Err(error)) => {
                    eprintln!("delta-sandbox: --landlock is not valid rules: {error}");
                    return ExitCode::from(2);
                }
            };
            match keep(&KeepOptions { socket, landlock }, &mut std::io::stdout()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("delta-sandbox: {error}");
                    ExitCode::from(126)
                }
            }
        }
        Some("call") => {
            let (Some(cwd), false) = (cwd, argv.is_empty()) else {
                eprintln!("delta-sandbox: call needs --cwd DIR and -- COMMAND\n{USAGE}");
                return ExitCode::from(2);
            };
            match call(&socket, &cwd, &argv) {
                Ok(CallEnd::Exited(code)) => ExitCode::from(u8::try_from(code & 0xff).unwrap_or(1)),
                Ok(CallEnd::Signaled(number)) => {
                    // Ends this process the way the command ended, so that the engine
                    // reports the same signal; an ignored signal falls back to 128 + N.
                    if let Ok(signal) = Signal::try_from(number) {
                        let _ = raise(signal);
                    }
                    ExitCode::from(u8::try_from((128 + number) & 0xff).unwrap_or(1))
                }
                Ok(CallEnd::NotStarted(why)) => {
                    eprintln!("delta-sandbox: {why}");
                    ExitCode::from(127)
                }
                Err(error) => {
                    eprintln!("delta-sandbox: {error}");
                    ExitCode::from(126)
                }
            }
        }
        _ => {
            eprintln!("delta-sandbox: unknown command {command:?}\n{USAGE}");
            ExitCode::from(2)
        }
    }
}
