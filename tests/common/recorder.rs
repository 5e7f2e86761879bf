//! A fake Redis that records what it is sent: it answers every request (`CONFIG GET` with
//! a value, anything else `+OK`) and keeps each request's bytes in arrival order, so a test
//! can check requests byte for byte (the real redis-benchmark's, or kvbench's).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;

/// The fake server: a listener on a free port of 127.0.0.1, one thread per connection.
/// Its threads live until the test process ends.
pub struct Recorder {
    pub port: u16,
    requests: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl Recorder {
    /// Starts listening; connect to `127.0.0.1:{port}`.
    pub fn start() -> Recorder {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a recorder");
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&requests);
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let seen = Arc::clone(&seen);
                thread::spawn(move || serve(stream, &seen));
            }
        });
        Recorder { port, requests }
    }

    /// Every request received so far, over all connections, in arrival order.
    pub fn requests(&self) -> Vec<Vec<u8>> {
        self.requests.lock().unwrap().clone()
    }
}

/// The length of the first complete request in `buf` and its first word, if complete.
pub fn next_request(buf: &[u8]) -> Option<(usize, Vec<u8>)> {
    let line_end = |from: usize| {
        buf[from..]
            .windows(2)
            .position(|w| w == b"\r\n")
            .map(|p| from + p)
    };
    if buf.first() != Some(&b'*') {
        let end = line_end(0)?;
        let word = buf[..end]
            .split(|&b| b == b' ')
            .next()
            .unwrap_or(b"")
            .to_vec();
        return Some((end + 2, word));
    }
    let end = line_end(0)?;
    let n: usize = std::str::from_utf8(&buf[1..end]).ok()?.parse().ok()?;
    let mut at = end + 2;
    let mut first = Vec::new();
    for i in 0..n {
        let end = line_end(at)?;
        let len: usize = std::str::from_utf8(&buf[at + 1..end]).ok()?.parse().ok()?;
        let start = end + 2;
        if buf.len() < start + len + 2 {
            return None;
        }
        if i == 0 {
            first = buf[start..start + len].to_vec();
        }
        at = start + len + 2;
    }
    Some((at, first))
}

fn serve(mut stream: TcpStream, seen: &Mutex<Vec<Vec<u8>>>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 65536];
    loop {
        while let Some((len, word)) = next_request(&buf) {
            let request: Vec<u8> = buf.drain(..len).collect();
            let reply: &[u8] = if word.eq_ignore_ascii_case(b"CONFIG") {
                b"*2\r\n$4\r\nsave\r\n$0\r\n\r\n"
            } else {
                b"+OK\r\n"
            };
            seen.lock().unwrap().push(request);
            if stream.write_all(reply).is_err() {
                return;
            }
        }
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// The first word of the first request in `request`, upper-cased (`""` if incomplete).
pub fn first_word(request: &[u8]) -> String {
    next_request(request)
        .map(|(_, w)| String::from_utf8_lossy(&w).to_ascii_uppercase())
        .unwrap_or_default()
}
