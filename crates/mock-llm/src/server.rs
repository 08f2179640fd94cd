//! [`MockServer`]: binds the socket, runs the routes on a runtime thread it owns, stops on drop.

use std::fs::File;
use std::future::IntoFuture as _;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use delta_scenario::MockProfile;
use delta_scenario::mock_script::Script;
use serde_json::Value;
use tokio::sync::watch;

use crate::app::{App, router};
use crate::listener::{Connection, CuttableListener};
use crate::log::RecordedRequest;
use crate::window::ContextWindow;

/// How long a stopping server lets in-flight requests finish before cutting them off, so
/// a scripted `delay_ms` of minutes cannot hold up a test's teardown or Ctrl-C.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

/// Where and how a [`MockServer`] runs.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Address to bind. Default: `127.0.0.1:0` (any free port).
    pub addr: SocketAddr,
    /// Write each chat request as one JSON line to this file (created or truncated).
    pub record_file: Option<PathBuf>,
    /// Keep requests in memory for [`MockServer::requests`]. Default: `true`; turn it off
    /// for long benchmark runs, where the kept conversations would grow without bound.
    pub keep_requests: bool,
    /// Validate every chat request the way this server does, and refuse what it refuses
    /// with its status and error body. Default: `None` (accept any chat request).
    pub strict: Option<MockProfile>,
    /// Reject requests over this window with a context-length error. Default: none.
    pub context_window: Option<ContextWindow>,
    /// Count the prompt's tokens and report the part a provider's prefix cache would hold,
    /// as each API reports it. Default: off (the script's usage is reported).
    pub prompt_cache: bool,
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            record_file: None,
            keep_requests: true,
            strict: None,
            context_window: None,
            prompt_cache: false,
        }
    }
}

/// The server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    /// The record file could not be created.
    #[error("cannot create record file {}: {source}", path.display())]
    RecordFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The runtime or its thread could not be started.
    #[error("cannot start the server runtime: {0}")]
    Runtime(#[source] std::io::Error),
}

/// A running mock server.
///
/// It owns a thread with its own single-threaded tokio runtime, so it works the same from
/// synchronous tests and from inside a tokio runtime (`#[tokio::test]`): [`MockServer::start`]
/// returns once the port is bound, and requests are served until the value is dropped.
/// Dropping it stops accepting connections, gives in-flight requests up to one second, then
/// closes everything and joins the thread (so drop may block for up to that second).
pub struct MockServer {
    addr: SocketAddr,
    app: Arc<App>,
    stop: Option<watch::Sender<bool>>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for MockServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl MockServer {
    /// Serves `script` on `127.0.0.1`, on a free port.
    pub fn start(script: Script) -> Result<Self, ServerError> {
        Self::start_with(script, ServerOptions::default())
    }

    /// Serves `script` as `options` say.
    pub fn start_with(script: Script, options: ServerOptions) -> Result<Self, ServerError> {
        let bind_error = |source| ServerError::Bind {
            addr: options.addr,
            source,
        };
        let listener = std::net::TcpListener::bind(options.addr).map_err(bind_error)?;
        listener.set_nonblocking(true).map_err(bind_error)?;
        let addr = listener.local_addr().map_err(bind_error)?;
        let file = match options.record_file {
            Some(path) => match File::create(&path) {
                Ok(file) => Some((path, file)),
                Err(source) => return Err(ServerError::RecordFile { path, source }),
            },
            None => None,
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(ServerError::Runtime)?;
        // Registering here (not on the thread) lets a failure reach the caller.
        let listener = {
            let _entered = runtime.enter();
            tokio::net::TcpListener::from_std(listener).map_err(bind_error)?
        };
        let app = Arc::new(
            App::new(script, file, options.keep_requests, options.strict)
                .with_window(options.context_window)
                .with_prompt_cache(options.prompt_cache),
        );
        let (stop, stopped) = watch::channel(false);
        let routes = router(Arc::clone(&app));
        let thread = std::thread::Builder::new()
            .name(format!("mock-llm {addr}"))
            .spawn(move || serve(runtime, CuttableListener(listener), routes, stopped))
            .map_err(ServerError::Runtime)?;
        Ok(Self {
            addr,
            app,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The bound port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// The base URL for OpenAI clients, ending in `/v1` (e.g. `http://127.0.0.1:41234/v1`).
    /// A wildcard bind address is given as `127.0.0.1`.
    pub fn base_url(&self) -> String {
        let mut addr = self.addr;
        if addr.ip().is_unspecified() {
            addr.set_ip(Ipv4Addr::LOCALHOST.into());
        }
        format!("http://{addr}/v1")
    }

    /// The bodies of the chat requests received so far, in arrival order (a body that was
    /// not JSON appears as a string). Empty when `keep_requests` is off.
    pub fn requests(&self) -> Vec<Value> {
        self.app
            .recorded()
            .into_iter()
            .map(|record| record.body)
            .collect()
    }

    /// The chat requests received so far with their step and path, as the record file has
    /// them. Empty when `keep_requests` is off.
    pub fn recorded(&self) -> Vec<RecordedRequest> {
        self.app.recorded()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            // An error only means the thread is gone already.
            let _ = stop.send(true);
        }
        if let Some(thread) = self.thread.take() {
            // The thread only runs the runtime; if it panicked there is nothing to clean up.
            let _ = thread.join();
        }
    }
}

fn serve(
    runtime: tokio::runtime::Runtime,
    listener: CuttableListener,
    routes: axum::Router,
    stopped: watch::Receiver<bool>,
) {
    let mut graceful = stopped.clone();
    let mut deadline = stopped;
    runtime.block_on(async move {
        let server = axum::serve(
            listener,
            routes.into_make_service_with_connect_info::<Connection>(),
        )
        .with_graceful_shutdown(async move {
            // A dropped sender (Err) means stop as well.
            let _ = graceful.wait_for(|stop| *stop).await;
        });
        let cut_off = async move {
            let _ = deadline.wait_for(|stop| *stop).await;
            tokio::time::sleep(SHUTDOWN_GRACE).await;
        };
        tokio::select! {
            // axum retries failed accepts itself, so serving only ends on shutdown.
            _ = server.into_future() => {}
            () = cut_off => {}
        }
    });
    // Dropping the runtime here cancels whatever is still in flight and closes its sockets.
    drop(runtime);
}
