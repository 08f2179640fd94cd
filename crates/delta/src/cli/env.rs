//! `delta env probe`: what this machine can enforce, kind by kind (docs/environments.md).

use clap::{Args, Subcommand, ValueEnum};

use super::drive::kind_parser;
use super::error::CliError;
use super::render;
use delta_engine::environment::{Kind, ProbeReport, Runtime, probe};
use delta_engine::output::Exit;

/// Arguments of `delta env`.
#[derive(Debug, Args)]
#[command(after_help = render::examples(&[
    ("What can this machine enforce?", "delta env probe"),
    ("Fail a job script early unless bubblewrap works", "delta env probe bwrap || exit"),
    ("Check podman and an image", "delta env probe container --image localhost/task:1"),
]))]
pub struct EnvArgs {
    #[command(subcommand)]
    command: EnvCommand,
}

#[derive(Debug, Subcommand)]
enum EnvCommand {
    /// Report what each environment kind needs and whether it works here: the Landlock
    /// ABI, bubblewrap and user namespaces, container runtimes.
    #[command(long_about = PROBE_ABOUT)]
    Probe(ProbeArgs),
}

const PROBE_ABOUT: &str = "Report whether each environment kind works on this machine, with \
    what it enforces or why it cannot: the kernel's Landlock ABI, bubblewrap (a trial sandbox \
    with the namespaces a run uses) and the user namespace settings it depends on, podman and \
    docker. The checks are those a run makes before it starts.\n\n\
    Exit code: 0; with KIND, 0 only when that kind works, else 126.";

/// Arguments of `delta env probe`.
#[derive(Debug, Args)]
struct ProbeArgs {
    /// The kind to decide the exit code by (host, landlock, bwrap, container).
    #[arg(value_name = "KIND", value_parser = kind_parser())]
    kind: Option<Kind>,

    /// The container runtime to check for the container kind.
    #[arg(long, value_enum, default_value_t = RuntimeArg::Podman)]
    runtime: RuntimeArg,

    /// An image the container kind must find (never pulled).
    #[arg(long, value_name = "IMAGE")]
    image: Option<String>,

    /// What stdout gets.
    #[arg(long, value_enum, default_value_t = ProbeFormat::Text)]
    format: ProbeFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum RuntimeArg {
    /// podman.
    Podman,
    /// docker.
    Docker,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ProbeFormat {
    /// A line per kind, then the facts.
    Text,
    /// One JSON object.
    Json,
}

impl EnvArgs {
    pub(super) fn run(self) -> Result<Exit, CliError> {
        match self.command {
            EnvCommand::Probe(args) => args.run(),
        }
    }
}

impl ProbeArgs {
    fn run(self) -> Result<Exit, CliError> {
        let runtime = match self.runtime {
            RuntimeArg::Podman => Runtime::Podman,
            RuntimeArg::Docker => Runtime::Docker,
        };
        let report = probe(runtime, self.image.as_deref());
        let text = match self.format {
            ProbeFormat::Text => text(&report),
            ProbeFormat::Json => format!(
                "{}\n",
                serde_json::to_string_pretty(&report).unwrap_or_default()
            ),
        };
        render::stdout(&text)?;
        let works = self
            .kind
            .is_none_or(|kind| report.kind(kind).is_some_and(|probe| probe.works));
        Ok(if works { Exit::Success } else { Exit::Config })
    }
}

fn text(report: &ProbeReport) -> String {
    let mut out = String::new();
    for kind in &report.kinds {
        out.push_str(&format!(
            "{:<10} {:<4} {}\n",
            kind.kind.as_str(),
            if kind.works { "yes" } else { "no" },
            kind.detail
        ));
    }
    out.push('\n');
    out.push_str(&format!("Landlock ABI:     {}\n", report.landlock_abi));
    out.push_str(&format!(
        "bubblewrap:       {}\n",
        match (&report.bwrap, &report.bwrap_version) {
            (Some(path), Some(version)) => format!("{path} ({version})"),
            (Some(path), None) => path.clone(),
            (None, _) => "not on PATH".to_owned(),
        }
    ));
    let userns = &report.user_namespaces;
    let knob = |value: Option<u64>| value.map_or_else(|| "absent".to_owned(), |v| v.to_string());
    out.push_str(&format!(
        "user namespaces:  {}; max_user_namespaces {}, unprivileged_userns_clone {}, \
         apparmor_restrict_unprivileged_userns {}\n",
        if userns.root {
            "running as root (bwrap needs none)"
        } else {
            "not root (bwrap needs them)"
        },
        knob(userns.max_user_namespaces),
        knob(userns.unprivileged_userns_clone),
        knob(userns.apparmor_restrict_unprivileged_userns),
    ));
    for runtime in &report.runtimes {
        out.push_str(&format!(
            "{:<17} {}\n",
            format!("{}:", runtime.name),
            match (&runtime.path, runtime.works) {
                (Some(path), true) => format!("{path} (works)"),
                (Some(path), false) => format!("{path} (`{} info` fails)", runtime.name),
                (None, _) => "not on PATH".to_owned(),
            }
        ));
    }
    out.push_str(&format!(
        "delta-sandbox:    {}\n",
        report.helper.as_deref().unwrap_or("not found")
    ));
    out
}
