//! The security tests (issue 25, "Security tests"): a tool tries each escape in
//! turn, and under landlock, bwrap and container every attempt is blocked or contained
//! while the run goes on to its end; the same attempts succeed on the host, so these tests
//! can fail.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use tempfile::TempDir;

use super::support::{
    CONFINED, Sh, kill_processes, kind_args, outside_tmp, process_running, require_components,
};
use crate::support::run::API_KEY;

/// What a tool managed, attempt by attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Escapes {
    /// Created a file outside the workspace (on the host).
    wrote_outside: bool,
    /// Read the planted secret in `$HOME/.ssh`.
    read_secret: bool,
    /// Read it through a symlink in the workspace.
    followed_symlink: bool,
    /// Connected to a port listening on the host's 127.0.0.1.
    connected: bool,
    /// Killed a host process.
    signalled: bool,
    /// Read a host process's environment through `/proc/<pid>/environ`.
    read_environ: bool,
    /// Left a process running after the run.
    outlived: bool,
    /// Saw the API key in its environment.
    saw_key: bool,
}

impl Escapes {
    fn all(value: bool) -> Self {
        Self {
            wrote_outside: value,
            read_secret: value,
            followed_symlink: value,
            connected: value,
            signalled: value,
            read_environ: value,
            outlived: value,
            saw_key: value,
        }
    }
}

/// Everything planted on the host for the attempts.
struct Planted {
    _dir: TempDir,
    home: PathBuf,
    secret_file: PathBuf,
    secret: String,
    outside: PathBuf,
    port: u16,
    connections: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    victim: Child,
    holder: Child,
    environ_secret: String,
    marker: String,
}

impl Planted {
    fn new() -> Self {
        let dir = outside_tmp();
        let unique = format!("{}{}", std::process::id(), fastrand::u32(10_000..99_999));
        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join(".ssh")).expect("create $HOME/.ssh");
        let secret = format!("planted-secret-{unique}");
        let secret_file = home.join(".ssh/planted");
        std::fs::write(&secret_file, &secret).expect("plant the secret");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&outside).expect("create the outside directory");

        let listener = TcpListener::bind("127.0.0.1:0").expect("listen on 127.0.0.1");
        let port = listener.local_addr().expect("address").port();
        listener.set_nonblocking(true).expect("non-blocking");
        let connections = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        {
            let connections = Arc::clone(&connections);
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    if listener.accept().is_ok() {
                        connections.fetch_add(1, Ordering::SeqCst);
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
            });
        }
        let victim = Command::new("sleep")
            .arg("600")
            .spawn()
            .expect("start the host process to signal");
        let environ_secret = format!("environ-secret-{unique}");
        let holder = Command::new("sleep")
            .arg("600")
            .env("DELTA_PLANTED", &environ_secret)
            .spawn()
            .expect("start the host process whose environment is read");
        Planted {
            _dir: dir,
            home,
            secret_file,
            secret,
            outside,
            port,
            connections,
            stop,
            victim,
            holder,
            environ_secret,
            // A command line no other process has: `sleep <marker>`.
            marker: format!("{}", 100_000 + fastrand::u32(0..800_000)),
        }
    }

    /// The tool's scripts, one attempt each, in the order of [`Escapes`].
    fn scripts(&self) -> Vec<String> {
        vec![
            format!(
                "echo escaped > {} && echo WROTE",
                self.outside.join("written").display()
            ),
            format!("cat {}", self.secret_file.display()),
            "cat link-to-secret".to_owned(),
            format!(
                "echo hi | busybox nc -w 2 127.0.0.1 {}; echo nc=$?",
                self.port
            ),
            format!("kill -TERM {}; echo kill=$?", self.victim.id()),
            format!(
                "tr '\\0' '\\n' < /proc/{}/environ | grep DELTA_PLANTED || echo NOT-READ",
                self.holder.id()
            ),
            format!("(sleep {} > /dev/null 2>&1 &); echo started", self.marker),
            "echo \"${DELTA_API_KEY:-NO-KEY}\"".to_owned(),
        ]
    }

    /// What the attempts achieved, from the observations and the host's state after the run.
    fn escapes(&mut self, observations: &[String]) -> Escapes {
        let said = |index: usize| observations.get(index).cloned().unwrap_or_default();
        let escapes = Escapes {
            wrote_outside: self.outside.join("written").exists(),
            read_secret: said(1).contains(&self.secret),
            followed_symlink: said(2).contains(&self.secret),
            connected: self.connections.load(Ordering::SeqCst) > 0,
            signalled: self.victim.try_wait().ok().flatten().is_some(),
            read_environ: said(5).contains(&self.environ_secret),
            outlived: process_running(&["sleep", &self.marker]),
            saw_key: !said(7).contains("NO-KEY"),
        };
        kill_processes(&["sleep", &self.marker]);
        escapes
    }
}

impl Drop for Planted {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for child in [&mut self.victim, &mut self.holder] {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Runs every attempt under `kind` and says what got through.
fn attempt_everything(kind: &str) -> Escapes {
    require_components();
    let mut planted = Planted::new();
    let secret_file = planted.secret_file.clone();
    let args = if kind == "host" {
        Vec::new()
    } else {
        kind_args(kind)
    };
    let run = Sh {
        scripts: planted.scripts(),
        args,
        env: vec![("HOME".to_owned(), planted.home.display().to_string())],
        ..Sh::default()
    }
    .run(|dir: &Path| {
        std::os::unix::fs::symlink(&secret_file, dir.join("ws/link-to-secret"))
            .expect("plant the symlink");
    });
    assert_eq!(run.output.status.code(), Some(0), "{}", run.said());
    let observations = run.observations();
    assert_eq!(observations.len(), 8, "every attempt ran: {}", run.said());
    // The key never reaches a file, whatever the tool printed.
    crate::support::run::assert_in_no_file(&run.workspace, API_KEY);
    planted.escapes(&observations)
}

#[test]
fn escapes_succeed_on_host() {
    assert_eq!(attempt_everything("host"), Escapes::all(true));
}

#[test]
fn landlock_blocks_or_contains_every_escape() {
    assert_eq!(attempt_everything("landlock"), Escapes::all(false));
}

#[test]
fn bwrap_blocks_or_contains_every_escape() {
    assert_eq!(attempt_everything("bwrap"), Escapes::all(false));
}

#[test]
fn container_blocks_or_contains_every_escape() {
    assert_eq!(attempt_everything("container"), Escapes::all(false));
}

/// `pass_env` is how an agent passes the key in on purpose (a tool running a sub-agent).
#[test]
fn pass_env_passes_the_key_explicitly() {
    require_components();
    for kind in CONFINED {
        let agent = format!(
            "{}environment:\n  kind: {kind}\n  image: {}\n  pass_env: [DELTA_API_KEY]\n",
            super::support::SH_AGENT,
            super::support::IMAGE
        );
        let run = Sh {
            scripts: vec!["echo \"${DELTA_API_KEY:-NO-KEY}\"".to_owned()],
            agent: Some(agent),
            ..Sh::default()
        }
        .run(|_: &Path| {});
        assert_eq!(run.output.status.code(), Some(0), "{kind}: {}", run.said());
        // The observation is redacted: the key's place is marked, not absent.
        assert_eq!(
            run.observations(),
            ["[REDACTED]\n"],
            "{kind}: the key was passed in"
        );
    }
}
