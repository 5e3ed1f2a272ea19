//! Sockets shared by every protocol: opening a TCP connection the same way
//! for all of them, and counting the bytes that cross it.
//!
//! A protocol opens its connection with [`connect_tcp`] and wraps the stream
//! in a [`CountingStream`], so "bytes on the wire" means the same thing
//! (TCP payload bytes, both directions, all framing and headers included)
//! for every framework.

use crate::protocol::{CallError, WireCounter};
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// Opens a TCP connection to `target` (`host:port`) with `TCP_NODELAY` set,
/// as every RPC client does: requests are written whole, and Nagle's
/// algorithm would only add latency to small ones.
///
/// A numeric address (`127.0.0.1:9090`) is used as is; a name is resolved
/// by the system resolver.
pub async fn connect_tcp(target: &str) -> Result<TcpStream, CallError> {
    let stream = TcpStream::connect(target)
        .await
        .map_err(|e| CallError::Connect(format!("{target}: {e}")))?;
    stream
        .set_nodelay(true)
        .map_err(|e| CallError::Connect(format!("{target}: cannot set TCP_NODELAY: {e}")))?;
    Ok(stream)
}

/// A stream that adds every byte read from or written to it to a
/// [`WireCounter`]: one relaxed atomic add per successful read or write
/// call, never per byte.
///
/// Vectored writes are forwarded (and counted), so wrapping a stream does
/// not turn an HTTP/2 stack's `writev` into many small writes.
#[derive(Debug)]
pub struct CountingStream<S> {
    inner: S,
    counter: WireCounter,
}

impl<S> CountingStream<S> {
    pub fn new(inner: S, counter: WireCounter) -> Self {
        CountingStream { inner, counter }
    }

    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for CountingStream<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let poll = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = poll {
            let n = buf.filled().len() - before;
            if n > 0 {
                this.counter.add_received(n);
            }
        }
        poll
    }
}

impl<S: AsyncWrite + Unpin> CountingStream<S> {
    /// A write of the inner stream, its bytes counted once written.
    fn write_counted(
        self: Pin<&mut Self>,
        write: impl FnOnce(Pin<&mut S>) -> Poll<io::Result<usize>>,
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let poll = write(Pin::new(&mut this.inner));
        if let Poll::Ready(Ok(n)) = poll {
            this.counter.add_sent(n);
        }
        poll
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for CountingStream<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.write_counted(|inner| inner.poll_write(cx, buf))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.write_counted(|inner| inner.poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn counts_both_directions() {
        let (a, mut b) = tokio::io::duplex(64);
        let counter = WireCounter::default();
        let mut a = CountingStream::new(a, counter.clone());

        a.write_all(b"hello").await.unwrap();
        let mut got = [0u8; 5];
        b.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"hello");

        b.write_all(b"abc").await.unwrap();
        let mut back = [0u8; 3];
        a.read_exact(&mut back).await.unwrap();
        assert_eq!(&back, b"abc");

        let bufs = [IoSlice::new(b"xy"), IoSlice::new(b"z")];
        let n = a.write_vectored(&bufs).await.unwrap();
        assert!(n > 0);
        assert_eq!(counter.totals(), (5 + n as u64, 3));
    }
}
