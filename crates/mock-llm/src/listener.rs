//! A TCP listener whose connections a handler can cut without answering (`drop_connection`).
//!
//! axum handlers must return a response, so a handler cannot close its socket itself.
//! Each accepted stream carries a shared flag; the handler sets it through the
//! [`Connection`] it gets as `ConnectInfo`, and the stream then fails every read and write,
//! so hyper abandons the response it was given and drops (closes) the socket.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

/// Pause after a failed `accept` (e.g. out of file descriptors) so the loop does not spin.
const ACCEPT_RETRY: Duration = Duration::from_millis(50);

pub(crate) struct CuttableListener(pub(crate) TcpListener);

impl Listener for CuttableListener {
    type Io = CuttableStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match self.0.accept().await {
                Ok((stream, addr)) => {
                    // Small request/response pairs on kept-alive connections would otherwise
                    // wait on Nagle's algorithm; failing to set it only costs latency.
                    let _ = stream.set_nodelay(true);
                    let stream = CuttableStream {
                        inner: stream,
                        cut: Arc::new(AtomicBool::new(false)),
                    };
                    return (stream, addr);
                }
                Err(_) => tokio::time::sleep(ACCEPT_RETRY).await,
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.0.local_addr()
    }
}

pub(crate) struct CuttableStream {
    inner: TcpStream,
    cut: Arc<AtomicBool>,
}

impl CuttableStream {
    fn check(&self) -> io::Result<()> {
        if self.cut.load(Ordering::Acquire) {
            Err(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                "mock-llm: connection dropped by the script",
            ))
        } else {
            Ok(())
        }
    }
}

impl AsyncRead for CuttableStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.check()?;
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for CuttableStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.check()?;
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.check()?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.check()?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// The handler's handle on its connection.
#[derive(Clone)]
pub(crate) struct Connection(Arc<AtomicBool>);

impl Connection {
    /// Makes the connection fail from now on; hyper then closes it without a response.
    pub(crate) fn drop_now(&self) {
        self.0.store(true, Ordering::Release);
    }
}

impl Connected<IncomingStream<'_, CuttableListener>> for Connection {
    fn connect_info(stream: IncomingStream<'_, CuttableListener>) -> Self {
        Self(Arc::clone(&stream.io().cut))
    }
}
