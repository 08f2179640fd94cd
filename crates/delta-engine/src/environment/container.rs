//! The container kind: one container per run, through a runtime's command line (podman
//! by default, or docker: the same commands). The image is given, or built once per content
//! hash of a directory with a Dockerfile; nothing is ever pulled. The container is named
//! after the run, created before the run starts, reused by `delta continue` (re-created,
//! with a note for the model, when it is gone) and removed when the run ends unless kept.
//! Tools run with `exec` in it; a call that must be stopped is killed on the host, found by
//! its marker variable, since killing the `exec` client leaves the command running.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use super::Runtime;
use super::error::EnvironmentError;

/// The container's first process: a shell that waits forever and reaps the orphans of the
/// calls (busybox, dash and bash all do).
const HOLD: &str = "while :; do sleep 3600; done";

/// An image ready to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// Its name (for `build:`, the tag made from the content hash).
    pub name: String,
    /// Its id.
    pub id: String,
    /// Whether this launch built it.
    pub built: bool,
}

/// The runtime's program, found on PATH and answering `info`.
///
/// # Errors
/// [`EnvironmentError::RuntimeMissing`], [`EnvironmentError::RuntimeBroken`].
pub fn find_runtime(runtime: Runtime) -> Result<PathBuf, EnvironmentError> {
    let program =
        super::on_path(runtime.program()).ok_or_else(|| EnvironmentError::RuntimeMissing {
            runtime: runtime.program().to_owned(),
        })?;
    let output = run(&program, &["info"])?;
    if !output.status.success() {
        return Err(EnvironmentError::RuntimeBroken {
            runtime: runtime.program().to_owned(),
            message: last_lines(&output.stderr, 3),
        });
    }
    Ok(program)
}

fn run(program: &Path, args: &[&str]) -> Result<Output, EnvironmentError> {
    Command::new(program)
        .args(args)
        .output()
        .map_err(|error| EnvironmentError::Start {
            kind: super::Kind::Container,
            message: format!("cannot run {}: {error}", program.display()),
        })
}

/// The id of `image`, when the runtime has it.
#[must_use]
pub fn image_id(program: &Path, image: &str) -> Option<String> {
    let output = run(program, &["image", "inspect", "--format", "{{.Id}}", image]).ok()?;
    let id = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    (output.status.success() && !id.is_empty()).then_some(id)
}

/// `image`, which must exist.
///
/// # Errors
/// [`EnvironmentError::ImageMissing`].
pub fn existing_image(
    program: &Path,
    runtime: Runtime,
    image: &str,
) -> Result<Image, EnvironmentError> {
    let id = image_id(program, image).ok_or_else(|| EnvironmentError::ImageMissing {
        image: image.to_owned(),
        runtime: runtime.program().to_owned(),
    })?;
    Ok(Image {
        name: image.to_owned(),
        id,
        built: false,
    })
}

/// The image of the build directory `dir`: tagged with the hash of its content, built
/// only when no image has that tag.
///
/// # Errors
/// [`EnvironmentError::ImageBuild`] with the runtime's last lines; I/O errors reading `dir`.
pub fn built_image(
    program: &Path,
    runtime: Runtime,
    dir: &Path,
) -> Result<Image, EnvironmentError> {
    build(program, runtime, dir, None)
}

/// As [`built_image`], the build's whole output written to `log` and the build stopped
/// after `timeout` (`delta eval`: a task's build log and `build_timeout_sec`).
///
/// # Errors
/// As [`built_image`]; a build past `timeout` is an [`EnvironmentError::ImageBuild`].
pub fn built_image_logged(
    program: &Path,
    runtime: Runtime,
    dir: &Path,
    log: &Path,
    timeout: Duration,
) -> Result<Image, EnvironmentError> {
    build(program, runtime, dir, Some((log, timeout)))
}

fn build(
    program: &Path,
    runtime: Runtime,
    dir: &Path,
    logged: Option<(&Path, Duration)>,
) -> Result<Image, EnvironmentError> {
    let name = format!("localhost/delta-build:{}", content_hash(dir)?);
    if let Some(id) = image_id(program, &name) {
        return Ok(Image {
            name,
            id,
            built: false,
        });
    }
    let dir_text = dir.display().to_string();
    let args = ["build", "-t", &name, &dir_text];
    let failed = |output: String| EnvironmentError::ImageBuild {
        dir: dir.to_path_buf(),
        output,
        runtime: runtime.program().to_owned(),
    };
    let (succeeded, all) = match logged {
        None => {
            let output = run(program, &args)?;
            let mut all = output.stdout.clone();
            all.extend_from_slice(&output.stderr);
            (output.status.success(), all)
        }
        Some((log, timeout)) => run_logged(program, &args, log, timeout)?
            .ok_or_else(|| failed(format!("stopped after {} s", timeout.as_secs_f64())))?,
    };
    if !succeeded {
        return Err(failed(last_lines(&all, 6)));
    }
    let id = image_id(program, &name)
        .ok_or_else(|| failed(format!("the build succeeded, but {name} is not there")))?;
    Ok(Image {
        name,
        id,
        built: true,
    })
}

/// Runs `program args…` with its output in `log`; whether it succeeded and what it wrote,
/// or `None` when it ran past `timeout` (then it is killed).
fn run_logged(
    program: &Path,
    args: &[&str],
    log: &Path,
    timeout: Duration,
) -> Result<Option<(bool, Vec<u8>)>, EnvironmentError> {
    let file = fs_err::File::create(log)?.into_file();
    let mut child = Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(file.try_clone()?)
        .stderr(file)
        .spawn()
        .map_err(|error| EnvironmentError::Start {
            kind: super::Kind::Container,
            message: format!("cannot run {}: {error}", program.display()),
        })?;
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if started.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Ok(Some((status.success(), fs_err::read(log)?)))
}

/// The image's working directory (`WORKDIR`), when it sets one.
#[must_use]
pub fn image_workdir(program: &Path, image: &str) -> Option<String> {
    let output = run(
        program,
        &[
            "image",
            "inspect",
            "--format",
            "{{.Config.WorkingDir}}",
            image,
        ],
    )
    .ok()?;
    let workdir = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    (output.status.success() && !workdir.is_empty()).then_some(workdir)
}

/// Copies what `image` holds at `path` into the new directory `to` (empty when the image
/// has nothing there), through a container created for it and removed.
///
/// # Errors
/// [`EnvironmentError::Start`] when the container cannot be created.
pub fn extract(program: &Path, image: &str, path: &str, to: &Path) -> Result<(), EnvironmentError> {
    fs_err::create_dir_all(to)?;
    let output = run(program, &["create", "--pull=never", image, "true"])?;
    if !output.status.success() {
        return Err(EnvironmentError::Start {
            kind: super::Kind::Container,
            message: last_lines(&output.stderr, 3),
        });
    }
    let id = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    let source = format!("{id}:{}/.", path.trim_end_matches('/'));
    let target = to.display().to_string();
    // A path the image does not have leaves `to` empty: nothing to copy.
    let copied = run(program, &["cp", &source, &target]);
    let _ = run(program, &["rm", "-f", &id]);
    copied.map(|_| ())
}

/// Copies the host path `from` into the container `name` at `to` (a directory's
/// contents when `from` is one).
///
/// # Errors
/// [`EnvironmentError::Start`] with the runtime's words.
pub fn copy_in(program: &Path, name: &str, from: &Path, to: &str) -> Result<(), EnvironmentError> {
    let source = if from.is_dir() {
        format!("{}/.", from.display())
    } else {
        from.display().to_string()
    };
    copy(program, &source, &format!("{name}:{to}"))
}

/// Copies the contents of the directory `from` of the container `name` into the host
/// directory `to`.
///
/// # Errors
/// [`EnvironmentError::Start`] with the runtime's words.
pub fn copy_out(program: &Path, name: &str, from: &str, to: &Path) -> Result<(), EnvironmentError> {
    copy(
        program,
        &format!("{name}:{}/.", from.trim_end_matches('/')),
        &to.display().to_string(),
    )
}

fn copy(program: &Path, from: &str, to: &str) -> Result<(), EnvironmentError> {
    let output = run(program, &["cp", from, to])?;
    if output.status.success() {
        Ok(())
    } else {
        Err(EnvironmentError::Start {
            kind: super::Kind::Container,
            message: format!(
                "cannot copy {from} to {to}: {}",
                last_lines(&output.stderr, 3)
            ),
        })
    }
}

/// A hash of every file under `dir` (relative path, permissions, content; a symlink's
/// target), in path order: equal directories give equal tags on every machine (also
/// `delta eval`'s identity of a task).
///
/// # Errors
/// I/O errors reading `dir`.
pub fn content_hash(dir: &Path) -> Result<String, EnvironmentError> {
    let mut files = Vec::new();
    collect(dir, dir, &mut files)?;
    files.sort();
    let mut context = ring::digest::Context::new(&ring::digest::SHA256);
    for relative in files {
        let path = dir.join(&relative);
        let meta = fs_err::symlink_metadata(&path)?;
        context.update(relative.as_bytes());
        context.update(&[0]);
        let mode = std::os::unix::fs::PermissionsExt::mode(&meta.permissions());
        context.update(&mode.to_le_bytes());
        if meta.file_type().is_symlink() {
            context.update(fs_err::read_link(&path)?.display().to_string().as_bytes());
        } else {
            context.update(&fs_err::read(&path)?);
        }
        context.update(&[0]);
    }
    Ok(hex(&context.finish().as_ref()[..8]))
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<String>) -> Result<(), EnvironmentError> {
    for entry in fs_err::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            collect(root, &path, files)?;
        } else if let Ok(relative) = path.strip_prefix(root) {
            files.push(relative.display().to_string());
        }
    }
    Ok(())
}

/// The container of the run `run_id` in `workspace`: `delta-<run id>-<8 hex digits of the
/// workspace path>`, since two workspaces may hold runs of the same id (run ids already use
/// only the characters container names allow).
#[must_use]
pub fn name_for(run_id: &str, workspace: &Path) -> String {
    let digest = ring::digest::digest(
        &ring::digest::SHA256,
        workspace.as_os_str().as_encoded_bytes(),
    );
    format!("delta-{run_id}-{}", hex(&digest.as_ref()[..4]))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// What a container is made of.
#[derive(Debug)]
pub struct Setup<'a> {
    /// The runtime's program.
    pub program: &'a Path,
    /// Which runtime.
    pub runtime: Runtime,
    /// The container's name.
    pub name: &'a str,
    /// The run's id (a label).
    pub run_id: &'a str,
    /// The image.
    pub image: &'a Image,
    /// The workspace on the host.
    pub workspace: &'a Path,
    /// Where it appears inside.
    pub workdir: &'a Path,
    /// The agent directory, its entries read-only at their own paths.
    pub agent_home: &'a Path,
    /// `.env` files shown empty.
    pub env_files: &'a [PathBuf],
    /// Keep the default network.
    pub network: bool,
    /// `--cpus`.
    pub cpus: Option<f64>,
    /// `--memory` in MiB.
    pub memory_mb: Option<u64>,
}

/// A running container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Container {
    /// The runtime's program.
    pub program: PathBuf,
    /// Which runtime.
    pub runtime: Runtime,
    /// Its name.
    pub name: String,
    /// Its id.
    pub id: String,
    /// Its image's id.
    pub image_id: String,
    /// Whether it was made now (not reused).
    pub created: bool,
}

impl Setup<'_> {
    /// `run`'s arguments.
    #[must_use]
    pub fn run_args(&self) -> Vec<String> {
        let mut args: Vec<String> = vec![
            "run".into(),
            "-d".into(),
            "--name".into(),
            self.name.to_owned(),
            "--label".into(),
            format!("delta.run={}", self.run_id),
            "--label".into(),
            format!("delta.workspace={}", self.workspace.display()),
            "--pull=never".into(),
        ];
        if !self.network {
            args.extend(["--network".into(), "none".into()]);
        }
        let mut volume = |from: &Path, to: &Path, read_only: bool| {
            let suffix = if read_only { ":ro" } else { "" };
            args.extend([
                "-v".into(),
                format!("{}:{}{suffix}", from.display(), to.display()),
            ]);
        };
        // The agent directory read-only at its own path (`${AGENT_HOME}/tools/…` works),
        // entry by entry: without its .env and its numbered workspaces.
        for entry in super::agent_entries(self.agent_home) {
            if !self.workspace.starts_with(&entry) {
                volume(&entry, &entry, true);
            }
        }
        volume(self.workspace, self.workdir, false);
        volume(
            &self.workspace.join(".delta"),
            &self.workdir.join(".delta"),
            true,
        );
        for file in self.env_files.iter().filter(|file| file.exists()) {
            let inside = match file.strip_prefix(self.workspace) {
                Ok(rest) => self.workdir.join(rest),
                Err(_) => file.clone(),
            };
            volume(Path::new("/dev/null"), &inside, true);
        }
        args.extend(["--workdir".into(), self.workdir.display().to_string()]);
        if let Some(cpus) = self.cpus {
            args.extend(["--cpus".into(), cpus.to_string()]);
        }
        if let Some(memory) = self.memory_mb {
            args.extend(["--memory".into(), format!("{memory}m")]);
        }
        args.extend([
            self.image.name.clone(),
            "sh".into(),
            "-c".into(),
            HOLD.into(),
        ]);
        args
    }

    /// The run's container: the existing one when it runs this image (started if it
    /// stopped), else a new one (an existing one of another image removed first).
    ///
    /// # Errors
    /// [`EnvironmentError::Start`] with the runtime's words.
    pub fn start(&self) -> Result<Container, EnvironmentError> {
        let failed = |message: String| EnvironmentError::Start {
            kind: super::Kind::Container,
            message,
        };
        if let Some((id, image_id, running)) = inspect(self.program, self.name) {
            if image_id == self.image.id {
                if !running {
                    let output = run(self.program, &["start", self.name])?;
                    if !output.status.success() {
                        return Err(failed(last_lines(&output.stderr, 3)));
                    }
                }
                return Ok(self.container(id, false));
            }
            remove(self.program, self.runtime, self.name);
        }
        let args = self.run_args();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = run(self.program, &args)?;
        if !output.status.success() {
            return Err(failed(last_lines(&output.stderr, 4)));
        }
        let (id, _, _) = inspect(self.program, self.name)
            .ok_or_else(|| failed(format!("{} was created but cannot be inspected", self.name)))?;
        Ok(self.container(id, true))
    }

    fn container(&self, id: String, created: bool) -> Container {
        Container {
            program: self.program.to_path_buf(),
            runtime: self.runtime,
            name: self.name.to_owned(),
            id,
            image_id: self.image.id.clone(),
            created,
        }
    }
}

/// Id, image id and whether it runs, of the container `name` when it exists.
fn inspect(program: &Path, name: &str) -> Option<(String, String, bool)> {
    let output = run(
        program,
        &[
            "container",
            "inspect",
            "--format",
            "{{.Id}} {{.Image}} {{.State.Running}}",
            name,
        ],
    )
    .ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let mut words = text.split_whitespace();
    Some((
        words.next()?.to_owned(),
        words.next()?.to_owned(),
        words.next() == Some("true"),
    ))
}

/// Removes the container `name` at once (its first process ignores SIGTERM).
pub fn remove(program: &Path, runtime: Runtime, name: &str) {
    let args: &[&str] = match runtime {
        Runtime::Podman => &["rm", "-f", "-t", "0", name],
        // docker rm -f kills without waiting and has no -t.
        Runtime::Docker => &["rm", "-f", name],
    };
    let _ = run(program, args);
}

/// The last `n` non-empty lines of `bytes`, joined by ` / `.
fn last_lines(bytes: &[u8], n: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .collect();
    lines[lines.len().saturating_sub(n)..].join(" / ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_differ_by_workspace_and_keep_the_run_id() {
        let a = name_for("t1", Path::new("/b1/ws"));
        let b = name_for("t1", Path::new("/b2/ws"));
        assert!(a.starts_with("delta-t1-") && a.len() == "delta-t1-".len() + 8);
        assert_ne!(a, b);
        assert_eq!(a, name_for("t1", Path::new("/b1/ws")));
    }

    #[test]
    fn the_content_hash_follows_the_content_only() {
        let one = tempfile::tempdir().unwrap();
        let two = tempfile::tempdir().unwrap();
        for dir in [one.path(), two.path()] {
            std::fs::create_dir(dir.join("sub")).unwrap();
            std::fs::write(dir.join("Dockerfile"), "FROM x\n").unwrap();
            std::fs::write(dir.join("sub/a"), "a").unwrap();
        }
        let first = content_hash(one.path()).unwrap();
        assert_eq!(first.len(), 16);
        assert_eq!(first, content_hash(two.path()).unwrap());
        std::fs::write(two.path().join("sub/a"), "b").unwrap();
        assert_ne!(first, content_hash(two.path()).unwrap());
    }

    #[test]
    fn run_mounts_the_workspace_with_its_record_read_only() {
        let image = Image {
            name: "localhost/x:1".into(),
            id: "abc".into(),
            built: false,
        };
        let setup = Setup {
            program: Path::new("/usr/bin/podman"),
            runtime: Runtime::Podman,
            name: "delta-r-0",
            run_id: "r",
            image: &image,
            workspace: Path::new("/srv/ws"),
            workdir: Path::new("/app"),
            agent_home: Path::new("/srv/agent"),
            env_files: &[],
            network: false,
            cpus: Some(1.5),
            memory_mb: Some(256),
        };
        let args = setup.run_args().join(" ");
        assert_eq!(
            args,
            "run -d --name delta-r-0 --label delta.run=r --label delta.workspace=/srv/ws \
             --pull=never --network none -v /srv/ws:/app \
             -v /srv/ws/.delta:/app/.delta:ro --workdir /app --cpus 1.5 --memory 256m \
             localhost/x:1 sh -c while :; do sleep 3600; done"
        );
    }
}
