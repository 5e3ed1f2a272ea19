//! The server side of in-process HTTP/1.1 test servers: just large enough
//! to answer Hessian and SOAP calls over keep-alive connections. The servers that test the
//! client's HTTP must not share its parser, so this one is separate and
//! deliberately plain (a head up to a blank line, a `Content-Length` body).

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// One request as a test server read it.
#[derive(Debug)]
pub struct HttpRequest {
    /// The request line and the header lines, as sent.
    pub head: String,
    pub body: Vec<u8>,
}

impl HttpRequest {
    /// The request line's method.
    pub fn method(&self) -> &str {
        self.head.split(' ').next().unwrap_or("")
    }

    /// The request line's target.
    pub fn path(&self) -> &str {
        self.head.split(' ').nth(1).unwrap_or("")
    }

    /// The value of header `name` (any case), trimmed.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

/// Reads the next request from `stream`; `buf` keeps what was read beyond
/// it for the next call. `None` when the client closes the connection (or
/// it fails) first. A body is `Content-Length` long (none without one).
pub async fn read_request<S: AsyncRead + Unpin>(
    stream: &mut S,
    buf: &mut Vec<u8>,
) -> Option<HttpRequest> {
    let mut chunk = vec![0u8; 64 * 1024];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let mut request = HttpRequest {
        head: String::from_utf8_lossy(&buf[..head_end - 4]).into_owned(),
        body: Vec::new(),
    };
    let len = request
        .header("content-length")
        .map_or(0, |v| v.parse::<usize>().expect("a numeric Content-Length"));
    while buf.len() < head_end + len {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    request.body = buf.drain(..head_end + len).skip(head_end).collect();
    Some(request)
}

/// A whole reply: `status` (`200 OK`), a `Content-Type` and a
/// `Content-Length` body.
pub fn http_reply(status: &str, content_type: &str, body: &[u8]) -> Vec<u8> {
    let mut reply = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    reply.extend_from_slice(body);
    reply
}

/// An HTTP/1.1 server on a free local port that answers every request on
/// keep-alive connections with what `answer` makes of it (a whole reply,
/// e.g. [`http_reply`]); returns its address and the count of connections
/// it accepted.
pub async fn http_server<F, Fut>(answer: F) -> (String, Arc<AtomicUsize>)
where
    F: Fn(HttpRequest) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Vec<u8>> + Send,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::Relaxed);
            let answer = answer.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                while let Some(request) = read_request(&mut stream, &mut buf).await {
                    if stream.write_all(&answer(request).await).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (addr, accepted)
}
