//! Environment benchmarks (figures, not pass/fail tests): `bench/environments.sh`.
//!
//! 1. Added wall time per tool call: 200 calls of `true` through the process runner with
//!    each kind's placement (the run's sandbox or container already up), against the same
//!    200 calls on the host; p50 and p95 of each, and the difference.
//! 2. Container start per run: preparing (image checked) and starting the run's container,
//!    then removing it, five times.
//! 3. Image build per run: `build:` of a fresh directory (a new content hash, so podman
//!    builds), three times, and the same directory again (the tag is found, nothing built).
//!
//! Needs `delta-sandbox` on PATH (the script builds it), bubblewrap, podman and the image
//! of tests/confinement/setup.sh.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::path::Path;
use std::time::{Duration, Instant};

use delta_engine::environment::{Ending, EnvironmentConfig, Kind, Placement, Setting, prepare};
use delta_engine::process::{OutputPolicy, ProcessOptions, run_process_in};
use delta_engine::secrets::Redactor;

const CALLS: usize = 200;
const WARMUP: usize = 20;
const IMAGE: &str = "localhost/delta-busybox:latest";

fn main() {
    println!(
        "Delta Engine environment benchmarks ({} calls of `true` per kind)\n",
        CALLS
    );
    if let Ok(load) = std::fs::read_to_string("/proc/loadavg") {
        println!("load average before: {}", load.trim());
    }
    let agent = tempfile::tempdir().unwrap();
    std::fs::write(agent.path().join("agent.yaml"), "name: bench\n").unwrap();
    let workspace = tempfile::tempdir().unwrap();
    std::fs::create_dir(workspace.path().join(".delta")).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();

    let host = runtime.block_on(calls(&Placement::Host, workspace.path()));
    println!("\n1. Wall time per tool call (`true`), ms");
    println!(
        "{:<10} {:>8} {:>8} {:>12} {:>12}",
        "kind", "p50", "p95", "p50 added", "p95 added"
    );
    report("host", &host, &host);
    for kind in [Kind::Landlock, Kind::Bwrap, Kind::Container] {
        let config = EnvironmentConfig {
            kind,
            image: Some(IMAGE.to_owned()),
            ..EnvironmentConfig::default()
        };
        let prepared = prepare(&setting(&config, agent.path(), workspace.path())).unwrap();
        let environment = prepared.start("bench", false).unwrap();
        let times = runtime.block_on(calls(environment.placement(), workspace.path()));
        report(kind.as_str(), &times, &host);
        environment.shutdown(Ending::Over);
    }

    println!("\n2. Container start per run (prepare + start, then remove), ms");
    let config = EnvironmentConfig {
        kind: Kind::Container,
        image: Some(IMAGE.to_owned()),
        ..EnvironmentConfig::default()
    };
    for round in 1..=5 {
        let started = Instant::now();
        let prepared = prepare(&setting(&config, agent.path(), workspace.path())).unwrap();
        let environment = prepared.start(&format!("bench-{round}"), false).unwrap();
        let up = started.elapsed();
        let removing = Instant::now();
        environment.shutdown(Ending::Over);
        println!(
            "  run {round}: start {:.0} ms, removal {:.0} ms",
            ms(up),
            ms(removing.elapsed())
        );
    }

    println!("\n3. Image build per run (`build:` of a Dockerfile with one RUN step), ms");
    for round in 1..=3 {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("Dockerfile"),
            format!(
                "FROM {IMAGE}\nRUN echo bench-{}-{round} > /built.txt\n",
                std::process::id()
            ),
        )
        .unwrap();
        let config = EnvironmentConfig {
            kind: Kind::Container,
            build: Some(dir.path().to_path_buf()),
            ..EnvironmentConfig::default()
        };
        let started = Instant::now();
        prepare(&setting(&config, agent.path(), workspace.path())).unwrap();
        let built = started.elapsed();
        let started = Instant::now();
        let prepared = prepare(&setting(&config, agent.path(), workspace.path())).unwrap();
        let cached = started.elapsed();
        let environment = prepared
            .start(&format!("bench-build-{round}"), false)
            .unwrap();
        let image = environment
            .report()
            .and_then(|report| report.image.clone())
            .unwrap();
        environment.shutdown(Ending::Over);
        let _ = std::process::Command::new("podman")
            .args(["rmi", "-f", &image])
            .output();
        println!(
            "  build {round}: {:.0} ms; the same directory again (found by its hash): {:.0} ms",
            ms(built),
            ms(cached)
        );
    }
    if let Ok(load) = std::fs::read_to_string("/proc/loadavg") {
        println!("\nload average after: {}", load.trim());
    }
}

fn setting<'a>(config: &'a EnvironmentConfig, agent: &'a Path, workspace: &'a Path) -> Setting<'a> {
    static REDACTOR: std::sync::OnceLock<Redactor> = std::sync::OnceLock::new();
    Setting {
        config,
        agent_home: agent,
        workspace,
        tools: &[],
        key_file: None,
        env_files: Vec::new(),
        redactor: REDACTOR.get_or_init(Redactor::default),
    }
}

/// The wall time of each of [`CALLS`] calls of `true`, after [`WARMUP`] unmeasured ones.
async fn calls(placement: &Placement, workspace: &Path) -> Vec<Duration> {
    let options = ProcessOptions {
        cwd: workspace.to_path_buf(),
        env: Vec::new(),
        timeout: Duration::from_secs(60),
        output: OutputPolicy::default(),
        record: None,
    };
    let argv = vec!["true".to_owned()];
    let mut times = Vec::with_capacity(CALLS);
    for index in 0..WARMUP + CALLS {
        let started = Instant::now();
        let outcome = run_process_in(placement, &argv, None, &options)
            .await
            .unwrap();
        let took = started.elapsed();
        assert_eq!(outcome.exit_code, Some(0), "{outcome:?}");
        if index >= WARMUP {
            times.push(took);
        }
    }
    times.sort();
    times
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index]
}

fn report(kind: &str, times: &[Duration], host: &[Duration]) {
    let (p50, p95) = (percentile(times, 0.5), percentile(times, 0.95));
    let (h50, h95) = (percentile(host, 0.5), percentile(host, 0.95));
    println!(
        "{kind:<10} {:>8.2} {:>8.2} {:>12.2} {:>12.2}",
        ms(p50),
        ms(p95),
        ms(p50) - ms(h50),
        ms(p95) - ms(h95)
    );
}
