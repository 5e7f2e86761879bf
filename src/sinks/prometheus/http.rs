//! One HTTP/1.x exchange of the metrics endpoint: where a request head ends, which response
//! it gets, and that response's bytes. No I/O here.
//!
//! ```text
//! GET /metrics  HTTP/1.x -> 200, Content-Type: text/plain; version=0.0.4; charset=utf-8
//! HEAD /metrics HTTP/1.x -> 200, the same head, no body
//! other method on /metrics -> 405 (Allow: GET, HEAD)
//! any other path -> 404;  a malformed request line -> 400;  a head over 8 KiB -> 431
//! ```
//!
//! Every response carries `Connection: close`: a scrape a second does not need keep-alive,
//! and one request per connection keeps the server free of per-connection parsing state.
//! Error bodies are fixed strings that echo nothing from the request.

use std::sync::Arc;

/// Longest request head read before answering 431.
pub const MAX_REQUEST_HEAD: usize = 8192;

/// The media type of the text exposition format, version 0.0.4.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The one path served.
pub const METRICS_PATH: &str = "/metrics";

/// What a request asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// `GET /metrics`, or `HEAD /metrics` when `head_only`.
    Metrics {
        head_only: bool,
    },
    NotFound,
    MethodNotAllowed,
    BadRequest,
    HeadTooLarge,
    /// The server has as many clients as it serves at once.
    Busy,
}

/// A response's body: the published text (shared, not copied) or a fixed message.
#[derive(Clone, Debug)]
pub enum Body {
    Text(Arc<String>),
    Fixed(&'static str),
}

impl Body {
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Body::Text(text) => text.as_bytes(),
            Body::Fixed(text) => text.as_bytes(),
        }
    }
}

/// A response ready to write: `head` then `body`.
#[derive(Clone, Debug)]
pub struct Response {
    pub head: Vec<u8>,
    pub body: Body,
}

impl Response {
    /// The response to `route`; `metrics` is called only for a metrics request.
    pub fn new(route: Route, metrics: impl FnOnce() -> Arc<String>) -> Response {
        let (status, body, extra) = match route {
            Route::Metrics { .. } => ("200 OK", Body::Text(metrics()), ""),
            Route::NotFound => (
                "404 Not Found",
                Body::Fixed("404 page not found: metrics are at /metrics\n"),
                "",
            ),
            Route::MethodNotAllowed => (
                "405 Method Not Allowed",
                Body::Fixed("405 method not allowed: use GET\n"),
                "Allow: GET, HEAD\r\n",
            ),
            Route::BadRequest => ("400 Bad Request", Body::Fixed("400 bad request\n"), ""),
            Route::HeadTooLarge => (
                "431 Request Header Fields Too Large",
                Body::Fixed("431 request header fields too large\n"),
                "",
            ),
            Route::Busy => (
                "503 Service Unavailable",
                Body::Fixed("503 too many scrapes at once, retry\n"),
                "",
            ),
        };
        let content_type = match route {
            Route::Metrics { .. } => CONTENT_TYPE,
            _ => "text/plain; charset=utf-8",
        };
        let mut head = String::with_capacity(160);
        head.push_str("HTTP/1.1 ");
        head.push_str(status);
        head.push_str("\r\nContent-Type: ");
        head.push_str(content_type);
        head.push_str("\r\nContent-Length: ");
        head.push_str(itoa::Buffer::new().format(body.as_bytes().len()));
        head.push_str("\r\nConnection: close\r\n");
        head.push_str(extra);
        head.push_str("\r\n");
        let body = match route {
            Route::Metrics { head_only: true } => Body::Fixed(""),
            _ => body,
        };
        Response {
            head: head.into_bytes(),
            body,
        }
    }

    /// Head and body lengths together.
    pub fn total_len(&self) -> usize {
        self.head.len() + self.body.as_bytes().len()
    }

    /// The bytes from `offset` on that the next write should send: the rest of the head,
    /// then the rest of the body.
    pub fn remaining(&self, offset: usize) -> &[u8] {
        match offset.checked_sub(self.head.len()) {
            None => &self.head[offset..],
            Some(in_body) => self.body.as_bytes().get(in_body..).unwrap_or(&[]),
        }
    }
}

/// The length of the request head (through its blank line) if `buf` holds all of it.
/// A bare `\n` line ending is accepted, as HTTP/1.1 allows.
pub fn head_len(buf: &[u8]) -> Option<usize> {
    let mut line_start = 0;
    for (i, &b) in buf.iter().enumerate() {
        if b == b'\n' {
            let line = &buf[line_start..i];
            if line.is_empty() || line == b"\r" {
                // A blank line before any request line is tolerated noise (RFC 9112 2.2).
                if line_start > 0 && !only_blank_lines(&buf[..line_start]) {
                    return Some(i + 1);
                }
            }
            line_start = i + 1;
        }
    }
    None
}

fn only_blank_lines(bytes: &[u8]) -> bool {
    bytes.iter().all(|&b| b == b'\r' || b == b'\n')
}

/// Chooses the response from a complete request head.
pub fn route(head: &[u8]) -> Route {
    let text = head
        .iter()
        .position(|&b| b != b'\r' && b != b'\n')
        .map_or(&head[..0], |start| &head[start..]);
    let line_end = text.iter().position(|&b| b == b'\n').unwrap_or(text.len());
    let line = text[..line_end]
        .strip_suffix(b"\r")
        .unwrap_or(&text[..line_end]);
    let Ok(line) = std::str::from_utf8(line) else {
        return Route::BadRequest;
    };
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Route::BadRequest;
    };
    let token = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_graphic());
    if !token(method) || !target.starts_with('/') || !version.starts_with("HTTP/1.") {
        return Route::BadRequest;
    }
    let path = target.split_once('?').map_or(target, |(path, _query)| path);
    if path != METRICS_PATH {
        return Route::NotFound;
    }
    match method {
        "GET" => Route::Metrics { head_only: false },
        "HEAD" => Route::Metrics { head_only: true },
        _ => Route::MethodNotAllowed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_ends_at_the_blank_line() {
        assert_eq!(head_len(b""), None);
        assert_eq!(head_len(b"GET /metrics HTTP/1.1\r\nHost: x\r\n"), None);
        let req = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
        assert_eq!(head_len(req), Some(req.len()));
        let mut more = req.to_vec();
        more.extend_from_slice(b"GET / HTTP/1.1\r\n\r\n");
        assert_eq!(head_len(&more), Some(req.len()));
        assert_eq!(head_len(b"GET / HTTP/1.0\n\n"), Some(16));
        assert_eq!(head_len(b"\r\n\r\nGET / HTTP/1.0\r\n\r\n"), Some(22));
    }

    #[test]
    fn head_found_whatever_the_split() {
        let req = b"GET /metrics HTTP/1.1\r\nAccept: */*\r\n\r\n";
        for cut in 0..req.len() {
            assert_eq!(head_len(&req[..cut]), None, "cut at {cut}");
        }
        assert_eq!(head_len(req), Some(req.len()));
    }

    #[test]
    fn routes() {
        let cases: &[(&[u8], Route)] = &[
            (
                b"GET /metrics HTTP/1.1\r\n\r\n",
                Route::Metrics { head_only: false },
            ),
            (
                b"GET /metrics?x=1 HTTP/1.0\r\n\r\n",
                Route::Metrics { head_only: false },
            ),
            (
                b"\r\nGET /metrics HTTP/1.1\n\n",
                Route::Metrics { head_only: false },
            ),
            (
                b"HEAD /metrics HTTP/1.1\r\n\r\n",
                Route::Metrics { head_only: true },
            ),
            (b"POST /metrics HTTP/1.1\r\n\r\n", Route::MethodNotAllowed),
            (b"get /metrics HTTP/1.1\r\n\r\n", Route::MethodNotAllowed),
            (b"GET / HTTP/1.1\r\n\r\n", Route::NotFound),
            (b"POST /other HTTP/1.1\r\n\r\n", Route::NotFound),
            (b"GET /metrics/ HTTP/1.1\r\n\r\n", Route::NotFound),
            (b"GET /metrics HTTP/2\r\n\r\n", Route::BadRequest),
            (b"GET /metrics\r\n\r\n", Route::BadRequest),
            (b"GET  /metrics HTTP/1.1\r\n\r\n", Route::BadRequest),
            (b"GET metrics HTTP/1.1\r\n\r\n", Route::BadRequest),
            (b"\xff /metrics HTTP/1.1\r\n\r\n", Route::BadRequest),
            (b"\r\n\r\n", Route::BadRequest),
        ];
        for (req, want) in cases {
            assert_eq!(route(req), *want, "{}", String::from_utf8_lossy(req));
        }
    }

    #[test]
    fn metrics_response() {
        let text = Arc::new("a 1\n".to_string());
        let r = Response::new(Route::Metrics { head_only: false }, || Arc::clone(&text));
        let head = String::from_utf8(r.head.clone()).unwrap();
        assert_eq!(
            head,
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n\
             Content-Length: 4\r\nConnection: close\r\n\r\n"
        );
        assert_eq!(r.total_len(), head.len() + 4);
        assert_eq!(r.remaining(0), head.as_bytes());
        assert_eq!(r.remaining(3), &head.as_bytes()[3..]);
        assert_eq!(r.remaining(head.len()), b"a 1\n");
        assert_eq!(r.remaining(head.len() + 3), b"\n");
        assert_eq!(r.remaining(r.total_len()), b"");

        let h = Response::new(Route::Metrics { head_only: true }, || Arc::clone(&text));
        assert_eq!(h.head, r.head, "HEAD announces the GET body's length");
        assert_eq!(h.total_len(), r.head.len());
    }

    #[test]
    fn error_responses() {
        let never = || -> Arc<String> { panic!("an error response reads no metrics") };
        let r = Response::new(Route::MethodNotAllowed, never);
        let head = String::from_utf8(r.head.clone()).unwrap();
        assert!(
            head.starts_with("HTTP/1.1 405 Method Not Allowed\r\n"),
            "{head}"
        );
        assert!(head.contains("\r\nAllow: GET, HEAD\r\n"), "{head}");
        for (route, status) in [
            (Route::NotFound, "404"),
            (Route::BadRequest, "400"),
            (Route::HeadTooLarge, "431"),
            (Route::Busy, "503"),
        ] {
            let r = Response::new(route, never);
            let head = String::from_utf8(r.head.clone()).unwrap();
            assert!(head.starts_with(&format!("HTTP/1.1 {status} ")), "{head}");
            let length = format!("Content-Length: {}\r\n", r.body.as_bytes().len());
            assert!(head.contains(&length), "{head}");
        }
    }
}
