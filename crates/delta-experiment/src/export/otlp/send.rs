//! Posting a trace as an OTLP/HTTP exporter does: where, how encoded, with which headers
//! and timeout, from the command line or the standard `OTEL_EXPORTER_OTLP_*` variables
//! (the OpenTelemetry exporter specification), and what the receiver's answer means.

use std::time::Duration;

use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use prost::Message as _;

/// The OTLP/HTTP port and path a collector listens on when nothing says otherwise.
const DEFAULT_ENDPOINT: &str = "http://localhost:4318/v1/traces";
/// The exporter specification's default timeout.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// How the request is encoded on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// `http/protobuf`: `application/x-protobuf`, the default every receiver takes.
    HttpProtobuf,
    /// `http/json`: `application/json`, optional in OTLP/HTTP.
    HttpJson,
}

impl Protocol {
    /// The name the exporter specification gives it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Protocol::HttpProtobuf => "http/protobuf",
            Protocol::HttpJson => "http/json",
        }
    }

    fn content_type(self) -> &'static str {
        match self {
            Protocol::HttpProtobuf => "application/x-protobuf",
            Protocol::HttpJson => "application/json",
        }
    }

    fn parse(variable: &'static str, value: &str) -> Result<Self, PostError> {
        match value.trim() {
            "http/protobuf" => Ok(Protocol::HttpProtobuf),
            "http/json" => Ok(Protocol::HttpJson),
            other => Err(PostError::Protocol {
                variable,
                value: other.to_owned(),
            }),
        }
    }
}

/// Where and how a trace is posted.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The traces URL.
    pub url: reqwest::Url,
    /// The encoding.
    pub protocol: Protocol,
    /// Extra request headers.
    pub headers: Vec<(String, String)>,
    /// How long the whole request may take.
    pub timeout: Duration,
}

impl Settings {
    /// The settings of `--otlp-endpoint [URL]` and `--otlp-protocol`, each falling back
    /// on the standard variables (the signal's own, `OTEL_EXPORTER_OTLP_TRACES_*`, before
    /// the generic `OTEL_EXPORTER_OTLP_*`), then on the specification's defaults
    /// (`http://localhost:4318`, `http/protobuf`, 10 s).
    ///
    /// `endpoint` given on the command line gets `/v1/traces` appended unless it ends
    /// with it; `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is used as is and
    /// `OTEL_EXPORTER_OTLP_ENDPOINT` gets `/v1/traces` appended, as the specification
    /// says.
    ///
    /// # Errors
    /// [`PostError`] naming the flag or variable that is wrong.
    pub fn resolve(
        endpoint: Option<&str>,
        protocol: Option<Protocol>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, PostError> {
        let set = |name: &str| env(name).filter(|value| !value.trim().is_empty());
        let url = match endpoint {
            Some(endpoint) => traces_url(endpoint)?,
            None => match (
                set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
                set("OTEL_EXPORTER_OTLP_ENDPOINT"),
            ) {
                (Some(url), _) => parse_url("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", &url)?,
                (None, Some(base)) => {
                    let mut url = parse_url("OTEL_EXPORTER_OTLP_ENDPOINT", &base)?;
                    let path = format!("{}/v1/traces", url.path().trim_end_matches('/'));
                    url.set_path(&path);
                    url
                }
                (None, None) => parse_url("the default endpoint", DEFAULT_ENDPOINT)?,
            },
        };
        let protocol = match protocol {
            Some(protocol) => protocol,
            None => match (
                set("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"),
                set("OTEL_EXPORTER_OTLP_PROTOCOL"),
            ) {
                (Some(value), _) => Protocol::parse("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", &value)?,
                (None, Some(value)) => Protocol::parse("OTEL_EXPORTER_OTLP_PROTOCOL", &value)?,
                (None, None) => Protocol::HttpProtobuf,
            },
        };
        let timeout = [
            "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
            "OTEL_EXPORTER_OTLP_TIMEOUT",
        ]
        .into_iter()
        .find_map(|variable| set(variable).map(|value| (variable, value)))
        .map(|(variable, value)| match value.trim().parse::<u64>() {
            Ok(ms) if ms > 0 => Ok(Duration::from_millis(ms)),
            Ok(_) | Err(_) => Err(PostError::Timeout { variable, value }),
        })
        .transpose()?
        .unwrap_or(DEFAULT_TIMEOUT);
        Ok(Self {
            url,
            protocol,
            headers: headers_from_env(&env)?,
            timeout,
        })
    }
}

/// What can go wrong posting a trace to a collector.
#[derive(Debug, thiserror::Error)]
pub enum PostError {
    /// The endpoint is not a usable http(s) URL.
    #[error("{source_name} {endpoint:?} is not an http(s) URL: {reason}")]
    Endpoint {
        /// The flag or variable it came from.
        source_name: &'static str,
        /// The endpoint, without credentials.
        endpoint: String,
        /// What is wrong.
        reason: String,
    },
    /// A protocol other than the two of OTLP/HTTP.
    #[error(
        "{variable}={value:?} is not supported: use http/protobuf (the default) or http/json; \
         gRPC is not spoken, send to the collector's OTLP/HTTP port (4318) instead"
    )]
    Protocol {
        /// The variable read.
        variable: &'static str,
        /// Its value.
        value: String,
    },
    /// A timeout that is not a positive number of milliseconds.
    #[error("{variable}={value:?} is not a positive number of milliseconds")]
    Timeout {
        /// The variable read.
        variable: &'static str,
        /// Its value.
        value: String,
    },
    /// `OTEL_EXPORTER_OTLP_HEADERS` is malformed.
    #[error(
        "{variable}: entry {index} is not `key=value` (expected e.g. \
         `authorization=Bearer%20TOKEN,x-tenant=a`)"
    )]
    Headers {
        /// The variable read.
        variable: &'static str,
        /// 1-based position of the bad entry.
        index: usize,
    },
    /// The request could not be built (a trace that does not encode, a bad header).
    #[error("cannot build the request to {endpoint}: {reason}")]
    Build {
        /// The URL posted to, without credentials.
        endpoint: String,
        /// What is wrong.
        reason: String,
    },
    /// The request could not be sent.
    #[error("cannot post the trace to {endpoint}: {reason}")]
    Send {
        /// The URL posted to, without credentials.
        endpoint: String,
        /// The client's error.
        reason: String,
    },
    /// The collector answered with an error status.
    #[error("the collector at {endpoint} answered HTTP {status}: {body}")]
    Rejected {
        /// The URL posted to, without credentials.
        endpoint: String,
        /// The HTTP status.
        status: u16,
        /// The start of its answer.
        body: String,
    },
    /// The collector took the request but refused some of its spans.
    #[error("the collector at {endpoint} refused {rejected} of the trace's spans: {message}")]
    PartlyRejected {
        /// The URL posted to, without credentials.
        endpoint: String,
        /// How many spans it refused.
        rejected: i64,
        /// Why, as it says.
        message: String,
    },
}

/// What the collector said about a trace it accepted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Posted {
    /// A warning it sent with an accepted trace (`partial_success.error_message` with no
    /// span refused).
    pub warning: Option<String>,
}

/// The traces URL for `endpoint` given on the command line: used as given when its path
/// ends in `/v1/traces` (a signal-specific endpoint), else `/v1/traces` is appended (a
/// base endpoint).
///
/// # Errors
/// [`PostError::Endpoint`] when it is not an http(s) URL.
pub fn traces_url(endpoint: &str) -> Result<reqwest::Url, PostError> {
    let mut url = parse_url("--otlp-endpoint", endpoint)?;
    if !url.path().ends_with("/v1/traces") {
        let path = format!("{}/v1/traces", url.path().trim_end_matches('/'));
        url.set_path(&path);
    }
    Ok(url)
}

fn parse_url(source_name: &'static str, endpoint: &str) -> Result<reqwest::Url, PostError> {
    let fail = |reason: String| PostError::Endpoint {
        source_name,
        endpoint: without_userinfo(endpoint),
        reason,
    };
    let url = reqwest::Url::parse(endpoint.trim()).map_err(|e| fail(e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(fail(format!(
            "scheme {} is not http or https",
            url.scheme()
        )));
    }
    Ok(url)
}

/// `endpoint` without the user and password it may carry, for messages.
#[must_use]
pub fn without_userinfo(endpoint: &str) -> String {
    match reqwest::Url::parse(endpoint) {
        Ok(mut url) => {
            let _ = url.set_username("");
            let _ = url.set_password(None);
            url.to_string()
        }
        Err(_) => endpoint
            .split('@')
            .next_back()
            .unwrap_or_default()
            .to_owned(),
    }
}

/// The headers of `OTEL_EXPORTER_OTLP_TRACES_HEADERS`, else `OTEL_EXPORTER_OTLP_HEADERS`:
/// `key=value` pairs separated by commas, values percent-decoded (the OpenTelemetry
/// environment variable specification).
///
/// # Errors
/// [`PostError::Headers`] naming the variable and the bad entry.
pub fn headers_from_env(
    env: impl Fn(&str) -> Option<String>,
) -> Result<Vec<(String, String)>, PostError> {
    for variable in [
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
        "OTEL_EXPORTER_OTLP_HEADERS",
    ] {
        let Some(value) = env(variable) else {
            continue;
        };
        let mut headers = Vec::new();
        for (index, entry) in value.split(',').enumerate() {
            if entry.trim().is_empty() {
                continue;
            }
            let (key, value) = entry
                .split_once('=')
                .filter(|(key, _)| !key.trim().is_empty())
                .ok_or(PostError::Headers {
                    variable,
                    index: index + 1,
                })?;
            headers.push((percent_decode(key.trim()), percent_decode(value.trim())));
        }
        return Ok(headers);
    }
    Ok(Vec::new())
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while let Some(&byte) = bytes.get(index) {
        let hex = bytes
            .get(index + 1..index + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (byte, hex) {
            (b'%', Some(decoded)) => {
                out.push(decoded);
                index += 3;
            }
            _ => {
                out.push(byte);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Posts the trace `json` (OTLP/JSON, as [`super::to_json`] wrote it, after redaction) as
/// `settings` say: re-encoded as protobuf unless the protocol is `http/json`, so both
/// encodings carry exactly the redacted text.
///
/// # Errors
/// [`PostError::Send`] when nothing came back, [`PostError::Rejected`] on a non-2xx
/// answer, [`PostError::PartlyRejected`] when the collector refused spans.
pub fn post(settings: &Settings, json: &str) -> Result<Posted, PostError> {
    // A runtime of its own, so that the caller (the CLI) neither needs one nor compiles
    // the HTTP stack's generic code a second time.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| PostError::Send {
            endpoint: without_userinfo(settings.url.as_str()),
            reason: format!("cannot start the async runtime: {e}"),
        })?;
    runtime.block_on(send(settings, json))
}

async fn send(settings: &Settings, json: &str) -> Result<Posted, PostError> {
    let shown = without_userinfo(settings.url.as_str());
    let build = |reason: String| PostError::Build {
        endpoint: shown.clone(),
        reason,
    };
    let body = match settings.protocol {
        Protocol::HttpJson => json.as_bytes().to_vec(),
        Protocol::HttpProtobuf => serde_json::from_str::<ExportTraceServiceRequest>(json)
            .map_err(|e| build(e.to_string()))?
            .encode_to_vec(),
    };
    let send = |e: reqwest::Error| PostError::Send {
        endpoint: shown.clone(),
        reason: e.without_url().to_string(),
    };
    let client = delta_engine::http::client_builder()
        .timeout(settings.timeout)
        .build()
        .map_err(send)?;
    let mut request = client
        .post(settings.url.clone())
        .header(
            reqwest::header::CONTENT_TYPE,
            settings.protocol.content_type(),
        )
        .body(body);
    for (key, value) in &settings.headers {
        request = request.header(key.as_str(), value.as_str());
    }
    let response = request.send().await.map_err(send)?;
    let status = response.status();
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let answer = response.bytes().await.unwrap_or_default();
    if !status.is_success() {
        return Err(PostError::Rejected {
            endpoint: shown,
            status: status.as_u16(),
            body: String::from_utf8_lossy(&answer).chars().take(300).collect(),
        });
    }
    // An empty or unreadable success body means the collector took everything.
    let decoded = if content_type.starts_with("application/json") {
        serde_json::from_slice::<ExportTraceServiceResponse>(&answer).ok()
    } else {
        ExportTraceServiceResponse::decode(answer.as_ref()).ok()
    };
    let partial = decoded.and_then(|answer| answer.partial_success);
    match partial {
        Some(partial) if partial.rejected_spans > 0 => Err(PostError::PartlyRejected {
            endpoint: shown,
            rejected: partial.rejected_spans,
            message: partial.error_message,
        }),
        Some(partial) if !partial.error_message.is_empty() => Ok(Posted {
            warning: Some(partial.error_message),
        }),
        Some(_) | None => Ok(Posted::default()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        }
    }

    #[test]
    fn the_specifications_defaults_apply_when_nothing_is_set() {
        let settings = Settings::resolve(None, None, env(&[])).unwrap();
        assert_eq!(settings.url.as_str(), "http://localhost:4318/v1/traces");
        assert_eq!(settings.protocol, Protocol::HttpProtobuf);
        assert_eq!(settings.timeout, Duration::from_secs(10));
    }

    #[test]
    fn the_signals_variables_win_and_are_used_as_the_specification_says() {
        let settings = Settings::resolve(
            None,
            None,
            env(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://base:4318/otel/"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
                ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json"),
                ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"),
            ]),
        )
        .unwrap();
        assert_eq!(settings.url.as_str(), "http://base:4318/otel/v1/traces");
        assert_eq!(settings.protocol, Protocol::HttpJson);
        assert_eq!(settings.timeout, Duration::from_millis(2500));
        let exact = Settings::resolve(
            None,
            None,
            env(&[
                ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:9/custom"),
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://base:4318"),
            ]),
        )
        .unwrap();
        assert_eq!(exact.url.as_str(), "http://t:9/custom");
        let flag = Settings::resolve(
            Some("http://flag:4318"),
            Some(Protocol::HttpProtobuf),
            env(&[("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json")]),
        )
        .unwrap();
        assert_eq!(flag.url.as_str(), "http://flag:4318/v1/traces");
        assert_eq!(flag.protocol, Protocol::HttpProtobuf);
    }

    #[test]
    fn grpc_and_bad_timeouts_are_refused_naming_the_variable() {
        let error = Settings::resolve(None, None, env(&[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")]))
            .unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("OTEL_EXPORTER_OTLP_PROTOCOL=\"grpc\" is not supported"),
            "{error}"
        );
        let error = Settings::resolve(None, None, env(&[("OTEL_EXPORTER_OTLP_TIMEOUT", "soon")]))
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "OTEL_EXPORTER_OTLP_TIMEOUT=\"soon\" is not a positive number of milliseconds"
        );
    }
}
