//! The run's settings from the environment: the LLM client's retries and timeout
//! (`DELTA_LLM_*`) and the output limit of its processes (`DELTA_TOOL_OUTPUT_LIMIT_MB`).

use std::time::Duration;

use super::error::LaunchError;
use crate::llm::ClientSettings;
use crate::process::DEFAULT_OUTPUT_LIMIT;

/// Attempts per LLM call (the first included); see [`ClientSettings::max_attempts`].
pub const MAX_ATTEMPTS_ENV: &str = "DELTA_LLM_MAX_ATTEMPTS";
/// Base of the jittered exponential backoff between attempts, in milliseconds.
pub const BACKOFF_MS_ENV: &str = "DELTA_LLM_BACKOFF_MS";
/// Limit for one HTTP attempt, in milliseconds.
pub const TIMEOUT_MS_ENV: &str = "DELTA_LLM_TIMEOUT_MS";
/// Output a tool, hook or generator may store per stream before it is killed, in MiB.
pub const OUTPUT_LIMIT_MB_ENV: &str = "DELTA_TOOL_OUTPUT_LIMIT_MB";

/// The process environment, as the settings and credentials read it.
pub fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// The client's retry settings, with the `DELTA_LLM_*` overrides (used by tests and by
/// users behind slow or flaky endpoints).
///
/// # Errors
/// [`LaunchError::Setting`] naming the variable whose value is out of range.
pub fn client_settings(
    env: impl Fn(&str) -> Option<String>,
) -> Result<ClientSettings, LaunchError> {
    let mut settings = ClientSettings::default();
    let number = |variable: &'static str, min: u64| -> Result<Option<u64>, LaunchError> {
        let Some(value) = env(variable) else {
            return Ok(None);
        };
        match value.trim().parse::<u64>() {
            Ok(n) if n >= min => Ok(Some(n)),
            Ok(_) | Err(_) => Err(LaunchError::Setting {
                variable,
                value,
                expected: if min == 0 {
                    "a whole number of milliseconds"
                } else {
                    "a whole number greater than 0"
                },
            }),
        }
    };
    if let Some(attempts) = number(MAX_ATTEMPTS_ENV, 1)? {
        settings.max_attempts = u32::try_from(attempts).unwrap_or(u32::MAX);
    }
    if let Some(ms) = number(BACKOFF_MS_ENV, 0)? {
        settings.backoff_base = Duration::from_millis(ms);
    }
    if let Some(ms) = number(TIMEOUT_MS_ENV, 1)? {
        settings.request_timeout = Duration::from_millis(ms);
    }
    Ok(settings)
}

/// The per-stream output limit of tools, hooks and generators: `DELTA_TOOL_OUTPUT_LIMIT_MB`
/// (whole MiB, at least 1) for users whose tools legitimately print more, else the default.
///
/// # Errors
/// [`LaunchError::Setting`] when the value is not a whole number of MiB above 0.
pub fn output_limit(env: impl Fn(&str) -> Option<String>) -> Result<u64, LaunchError> {
    const MIB: u64 = 1024 * 1024;
    let Some(value) = env(OUTPUT_LIMIT_MB_ENV) else {
        return Ok(DEFAULT_OUTPUT_LIMIT);
    };
    match value.trim().parse::<u64>() {
        Ok(mb) if mb >= 1 => Ok(mb.saturating_mul(MIB)),
        Ok(_) | Err(_) => Err(LaunchError::Setting {
            variable: OUTPUT_LIMIT_MB_ENV,
            value,
            expected: "a whole number of MiB greater than 0",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        }
    }

    #[test]
    fn llm_settings_come_from_the_environment() {
        let settings = client_settings(env(&[
            (MAX_ATTEMPTS_ENV, "3"),
            (BACKOFF_MS_ENV, "0"),
            (TIMEOUT_MS_ENV, "2500"),
        ]))
        .unwrap();
        assert_eq!(settings.max_attempts, 3);
        assert_eq!(settings.backoff_base, Duration::ZERO);
        assert_eq!(settings.request_timeout, Duration::from_millis(2500));
    }

    #[test]
    fn the_output_limit_is_in_mib_with_a_default() {
        assert_eq!(output_limit(env(&[])).unwrap(), DEFAULT_OUTPUT_LIMIT);
        assert_eq!(
            output_limit(env(&[(OUTPUT_LIMIT_MB_ENV, "2")])).unwrap(),
            2 * 1024 * 1024
        );
        let error = output_limit(env(&[(OUTPUT_LIMIT_MB_ENV, "0")])).unwrap_err();
        assert_eq!(
            error.to_string(),
            "DELTA_TOOL_OUTPUT_LIMIT_MB=\"0\" is not a whole number of MiB greater than 0"
        );
    }

    #[test]
    fn a_bad_llm_setting_names_the_variable() {
        let error = client_settings(env(&[(MAX_ATTEMPTS_ENV, "0")])).unwrap_err();
        assert_eq!(
            error.to_string(),
            "DELTA_LLM_MAX_ATTEMPTS=\"0\" is not a whole number greater than 0"
        );
    }
}
