//! The MCP protocol as the engine speaks it: the official Rust SDK's client (`rmcp`)
//! behind a handful of non-generic calls: connect over a stdio server's pipes or over
//! streamable HTTP, list the tools, call one, close.
//!
//! The engine's `mcp` module owns everything around the protocol (the server's process,
//! timeouts, logs, call records). This crate exists so that rmcp's generic code is
//! instantiated here, built without optimization beside the engine, rather than in the
//! engine crate, the install's critical path (issue 24). That is why the calls return
//! boxed futures: an `async fn` is compiled in the crate that awaits it, a boxed one where
//! it is boxed.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use rmcp::model::{CallToolRequestParams, ClientConfig, Implementation};
use rmcp::service::{RoleClient, RunningService, serve_client};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransportConfig, StreamableHttpError,
};
use serde_json::{Map, Value};
use tokio::io::{AsyncRead, ReadBuf};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::mpsc;

/// The largest message (one JSON-RPC line, its newline included) a stdio server may send:
/// a larger one is dropped unread, and the call it answers ends at once saying so. rmcp's
/// own default, the same as its streamable-HTTP client's; set here so that the engine
/// can name it.
pub const MAX_MESSAGE_BYTES: usize = 16 << 20;

/// A call in progress, compiled in this crate (see the crate's documentation).
pub type Pending<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Headers sent with every request to a streamable-HTTP server.
pub type Headers = HashMap<http::HeaderName, http::HeaderValue>;

/// A tool as the server lists it.
#[derive(Debug)]
pub struct Tool {
    /// Its name on the server.
    pub name: String,
    /// What the server says it does.
    pub description: Option<String>,
    /// The JSON Schema of its arguments.
    pub input_schema: Map<String, Value>,
}

/// Why a call got no result.
#[derive(Debug)]
pub enum CallError {
    /// The server answered with a JSON-RPC error (unknown tool, invalid arguments…).
    Refused(String),
    /// The connection failed: the server crashed, exited or hung up.
    Lost(String),
    /// The answer was a message over [`MAX_MESSAGE_BYTES`]: dropped.
    TooLarge {
        /// Its size, newline included, when it was read to its end (stdio); over HTTP the
        /// client stops reading at the limit.
        bytes: Option<usize>,
    },
}

/// An initialized MCP session with one server.
#[derive(Debug)]
pub struct Client {
    service: RunningService<RoleClient, ClientConfig>,
    /// The sizes of the messages a stdio server sent over [`MAX_MESSAGE_BYTES`].
    oversized: Option<mpsc::UnboundedReceiver<usize>>,
}

impl Client {
    /// Makes the MCP handshake with a stdio server over its pipes. The error is the
    /// protocol's, as text.
    pub fn over_pipes(
        stdout: ChildStdout,
        stdin: ChildStdin,
    ) -> Pending<'static, Result<Self, String>> {
        Box::pin(async move {
            let (stdout, sizes) = LineSizes::new(stdout);
            let transport =
                AsyncRwTransport::new_client(stdout, stdin).with_max_line_length(MAX_MESSAGE_BYTES);
            let service = serve_client(client_config(), transport)
                .await
                .map_err(|error| error.to_string())?;
            Ok(Self {
                service,
                oversized: Some(sizes),
            })
        })
    }

    /// Makes the MCP handshake with a streamable-HTTP server at `url`, sending `headers`
    /// and, when given, `bearer` as its `Authorization`. The error is the protocol's, as
    /// text.
    pub fn over_http(
        url: &str,
        headers: Headers,
        bearer: Option<String>,
    ) -> Pending<'static, Result<Self, String>> {
        let mut config =
            StreamableHttpClientTransportConfig::with_uri(url.to_owned()).custom_headers(headers);
        if let Some(token) = bearer {
            config = config.auth_header(token);
        }
        Box::pin(async move {
            let transport = StreamableHttpClientTransport::from_config(config);
            let service = serve_client(client_config(), transport)
                .await
                .map_err(|error| error.to_string())?;
            Ok(Self {
                service,
                oversized: None,
            })
        })
    }

    /// Every tool the server lists, all pages of `tools/list`.
    pub fn list_tools(&self) -> Pending<'_, Result<Vec<Tool>, String>> {
        Box::pin(async move {
            let tools = self
                .service
                .list_all_tools()
                .await
                .map_err(|error| error.to_string())?;
            Ok(tools
                .into_iter()
                .map(|tool| Tool {
                    name: tool.name.into_owned(),
                    description: tool.description.map(std::borrow::Cow::into_owned),
                    input_schema: (*tool.input_schema).clone(),
                })
                .collect())
        })
    }

    /// Calls one tool; the result as JSON, as the server sent it.
    pub fn call<'a>(
        &'a mut self,
        tool: &'a str,
        arguments: Map<String, Value>,
    ) -> Pending<'a, Result<Value, CallError>> {
        Box::pin(self.call_inner(tool, arguments))
    }

    async fn call_inner(
        &mut self,
        tool: &str,
        arguments: Map<String, Value>,
    ) -> Result<Value, CallError> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = Some(arguments);
        // What was dropped before this call answered no call of it.
        if let Some(sizes) = &mut self.oversized {
            while sizes.try_recv().is_ok() {}
        }
        let dropped = async {
            match &mut self.oversized {
                Some(sizes) => sizes.recv().await,
                None => std::future::pending().await,
            }
        };
        // Calls are made one at a time, so a message dropped while this one waits was
        // its answer (rmcp drops it and keeps the connection; the call would wait out
        // its timeout).
        let answered = tokio::select! {
            answered = self.service.call_tool(params) => answered,
            Some(bytes) = dropped => return Err(CallError::TooLarge { bytes: Some(bytes) }),
        };
        match answered {
            Ok(result) => Ok(serde_json::to_value(&result).unwrap_or(Value::Null)),
            Err(rmcp::ServiceError::McpError(error)) => Err(CallError::Refused(error.to_string())),
            // The streamable-HTTP client refused a response body over its limit (the same
            // 16 MiB): the request failed, not the server.
            Err(rmcp::ServiceError::TransportSend(error)) if body_too_large(&error) => {
                Err(CallError::TooLarge { bytes: None })
            }
            Err(error) => Err(CallError::Lost(error.to_string())),
        }
    }

    /// The protocol revision the server answered the handshake with.
    pub fn protocol(&self) -> Option<String> {
        self.service
            .peer_info()
            .map(|info| info.protocol_version.as_str().to_owned())
    }

    /// Whether the session has ended (the transport closed).
    pub fn is_closed(&self) -> bool {
        self.service.is_closed()
    }

    /// Ends the session; a stdio server sees its stdin closed.
    pub fn close(self) -> Pending<'static, ()> {
        // Cancelling the service drops the transport, which closes the server's stdin.
        Box::pin(async move {
            let _ = self.service.cancel().await;
        })
    }
}

/// Whether `error` is the streamable-HTTP client refusing a response body over its limit.
fn body_too_large(error: &rmcp::transport::DynamicTransportError) -> bool {
    matches!(
        error
            .error
            .downcast_ref::<StreamableHttpError<reqwest::Error>>(),
        Some(StreamableHttpError::ResponseBodyTooLarge { .. })
    )
}

fn client_config() -> ClientConfig {
    let mut info = ClientConfig::default();
    info.client_info = Implementation::new("delta-engine", env!("CARGO_PKG_VERSION"));
    info
}

/// A stdio server's stdout as rmcp reads it, with the length of each line counted on the
/// way: a line over [`MAX_MESSAGE_BYTES`] (which rmcp drops) is reported by its size once
/// its newline arrives.
struct LineSizes<R> {
    inner: R,
    /// Bytes of the current line so far, its newline included once seen.
    line: usize,
    oversized: mpsc::UnboundedSender<usize>,
}

impl<R> LineSizes<R> {
    fn new(inner: R) -> (Self, mpsc::UnboundedReceiver<usize>) {
        let (oversized, sizes) = mpsc::unbounded_channel();
        (
            Self {
                inner,
                line: 0,
                oversized,
            },
            sizes,
        )
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for LineSizes<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &polled {
            let mut read = buf.filled().get(before..).unwrap_or_default();
            while let Some(end) = read.iter().position(|byte| *byte == b'\n') {
                let bytes = self.line + end + 1;
                if bytes > MAX_MESSAGE_BYTES {
                    // Nobody listening any more is fine: the connection is closing.
                    let _ = self.oversized.send(bytes);
                }
                self.line = 0;
                read = read.get(end + 1..).unwrap_or_default();
            }
            self.line += read.len();
        }
        polled
    }
}
