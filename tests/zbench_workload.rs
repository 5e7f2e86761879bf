//! zbench's workload against a real redis-server: the commands it plans are sent as planned
//! (over a plain blocking socket, since the engine does not run them yet) and the server's
//! own counts are checked: keys, ZADD calls, set sizes, MULTI/EXEC and query calls.

mod common;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::RedisServer;
use kvbench::frontend::zbench::flags::{ZbenchCommand, ZbenchSpec, parse};
use kvbench::frontend::zbench::render::ReplySizes;
use kvbench::frontend::zbench::workload::{Batch, ClientWorkload};
use kvbench::protocol::resp_encode::encode_command;
use kvbench::protocol::resp_value::{Value, value};

/// A reply as kvbench's RESP parser reads it, owned so the read buffer can move on.
#[derive(Debug, PartialEq)]
enum Reply {
    /// A simple or bulk string.
    Text(Vec<u8>),
    Int(i64),
    Array(Vec<Reply>),
    Error(String),
    Nil,
    /// A RESP3 double, boolean or big number.
    Other(Vec<u8>),
}

impl Reply {
    fn text(text: &str) -> Reply {
        Reply::Text(text.as_bytes().to_vec())
    }
}

impl From<&Value<'_>> for Reply {
    fn from(v: &Value<'_>) -> Reply {
        match v {
            Value::Simple(t) | Value::Bulk(t) => Reply::Text(t.to_vec()),
            Value::Int(n) => Reply::Int(*n),
            Value::Array(items) => Reply::Array(items.iter().map(Reply::from).collect()),
            Value::Error(t) => Reply::Error(String::from_utf8_lossy(t).into_owned()),
            Value::Nil => Reply::Nil,
            Value::Other(t) => Reply::Other(t.to_vec()),
        }
    }
}

/// A blocking connection that sends RESP commands and reads whole replies.
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    fn open(server: &RedisServer) -> Conn {
        let stream = TcpStream::connect(server.addr()).expect("connect");
        // A generous bound, so a lost reply fails the test instead of hanging it.
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        Conn {
            stream,
            buf: Vec::new(),
        }
    }

    /// Sends `batch` in one write (MULTI/EXEC around it when asked) and returns the
    /// replies of its commands: for MULTI, the elements of EXEC's array.
    fn send(&mut self, batch: &Batch) -> Vec<Reply> {
        let mut out = Vec::new();
        if batch.multi {
            encode_command(&mut out, &[b"MULTI"]);
        }
        for cmd in batch.commands() {
            let args: Vec<&[u8]> = cmd.args().collect();
            encode_command(&mut out, &args);
        }
        if batch.multi {
            encode_command(&mut out, &[b"EXEC"]);
        }
        self.stream.write_all(&out).expect("write");
        if !batch.multi {
            return self.read(batch.len());
        }
        let mut replies = self.read(batch.len() + 2);
        assert_eq!(replies[0], Reply::text("OK"), "MULTI");
        assert!(
            replies[1..=batch.len()]
                .iter()
                .all(|r| *r == Reply::text("QUEUED"))
        );
        match replies.pop() {
            Some(Reply::Array(results)) => results,
            other => panic!("EXEC answered {other:?}"),
        }
    }

    fn read(&mut self, n: usize) -> Vec<Reply> {
        let mut replies = Vec::with_capacity(n);
        let mut chunk = [0u8; 65536];
        while replies.len() < n {
            if let Some((reply, used)) = value(&self.buf).map(|(v, used)| (Reply::from(&v), used)) {
                self.buf.drain(..used);
                replies.push(reply);
                continue;
            }
            let got = self.stream.read(&mut chunk).expect("read");
            assert!(got > 0, "server closed the connection");
            self.buf.extend_from_slice(&chunk[..got]);
        }
        replies
    }
}

fn spec(args: &[&str]) -> ZbenchSpec {
    match parse(args.iter().map(|s| s.to_string())) {
        Ok(ZbenchCommand::Run(spec)) => *spec,
        other => panic!("{args:?}: {other:?}"),
    }
}

/// Runs every client of `spec` in turn on one connection; returns every command's reply.
fn run(server: &RedisServer, spec: &ZbenchSpec) -> Vec<Reply> {
    let mut conn = Conn::open(server);
    let mut batch = Batch::new();
    let mut replies = Vec::new();
    for client in 0..spec.clients {
        let mut workload = ClientWorkload::new(spec, client);
        while workload.next_batch(&mut batch) {
            replies.extend(conn.send(&batch));
        }
    }
    replies
}

fn calls(stats: &HashMap<String, u64>, command: &str) -> u64 {
    stats.get(command).copied().unwrap_or(0)
}

/// The sizes of every sorted set, from the server.
fn zcards(server: &RedisServer) -> Vec<u64> {
    let mut conn = Conn::open(server);
    let keys: Vec<String> = server
        .cli(&["--scan", "--pattern", "zbench:*"])
        .lines()
        .map(str::to_string)
        .collect();
    let mut out = Vec::new();
    for key in &keys {
        encode_command(&mut out, &[b"ZCARD", key.as_bytes()]);
    }
    conn.stream.write_all(&out).expect("write");
    conn.read(keys.len())
        .into_iter()
        .map(|v| match v {
            Reply::Int(n) => n as u64,
            other => panic!("ZCARD answered {other:?}"),
        })
        .collect()
}

#[test]
fn load_then_query_as_the_server_counts_it() {
    let server = RedisServer::start();
    let load = spec(&[
        "-mode",
        "load",
        "-r",
        "2000",
        "-c",
        "7",
        "-pipeline",
        "16",
        "-p",
        &server.port.to_string(),
    ]);
    let replies = run(&server, &load);
    assert_eq!(replies.len(), 2000);
    assert!(
        replies
            .iter()
            .all(|r| matches!(r, Reply::Int(n) if (1..=10).contains(n)))
    );

    // 2000 sorted sets from 2000 ZADDs, sizes in range and zipf-skewed.
    assert_eq!(server.dbsize(), 2000);
    assert_eq!(calls(&server.commandstats(), "zadd"), 2000);
    let sizes = zcards(&server);
    assert_eq!(sizes.len(), 2000);
    let mut by_size = [0u64; 11];
    for &n in &sizes {
        assert!((1..=10).contains(&n), "ZCARD {n}");
        by_size[n as usize] += 1;
    }
    assert!(by_size[1] >= 2 * by_size[10], "{by_size:?}");

    // -pipeline 10 -multi -n 2000: 200 MULTI, 200 EXEC and 2000 queries, for every kind.
    for (query, command) in [
        ("zrangebylex", "zrangebylex"),
        ("zrevrangebylex", "zrevrangebylex"),
        ("zrange-byscore", "zrange"),
        ("zrange-byscore-rev", "zrevrangebyscore"),
    ] {
        server.config_resetstat();
        let spec = spec(&[
            "-mode",
            "query",
            "-query",
            query,
            "-r",
            "2000",
            "-n",
            "2000",
            "-pipeline",
            "10",
            "-multi",
        ]);
        let replies = run(&server, &spec);
        let stats = server.commandstats();
        assert_eq!(calls(&stats, "multi"), 200, "{query}: {stats:?}");
        assert_eq!(calls(&stats, "exec"), 200, "{query}");
        assert_eq!(calls(&stats, command), 2000, "{query}: {stats:?}");
        let mut histogram = ReplySizes::with_max(10);
        for reply in &replies {
            match reply {
                Reply::Array(items) => histogram.record(items.len(), 1),
                other => panic!("{query} answered {other:?}"),
            }
        }
        assert_eq!(histogram.total(), 2000, "{query}");
        let largest = histogram.iter().map(|(size, _)| size).max().unwrap_or(0);
        assert!(largest <= 10, "{query}: {histogram:?}");
        if command.contains("score") || command == "zrange" {
            // Scores lie in [0, 1): the score queries return whole sets, never empty.
            assert!(histogram.iter().all(|(size, _)| size >= 1), "{query}");
        } else {
            // Members are random letters: a bound of "[c" takes some sets wholly, some
            // partly and misses others.
            assert!(histogram.iter().any(|(size, _)| size == 0), "{query}");
            assert!(histogram.iter().any(|(size, _)| size >= 1), "{query}");
        }
    }
}

#[test]
fn a_shifted_keyspace_is_loaded_and_queried_where_it_is() {
    let server = RedisServer::start();
    let load = spec(&["-mode", "load", "-r", "300", "-r-start", "5000", "-c", "4"]);
    run(&server, &load);
    assert_eq!(server.dbsize(), 300);
    assert_eq!(server.cli(&["EXISTS", "zbench:{4tw}:5000"]), "1");
    assert_eq!(server.cli(&["EXISTS", "zbench:{4yG}:4999"]), "0");

    // Every query hits a loaded key: none comes back empty under a whole-set query.
    let query = spec(&[
        "-mode",
        "query",
        "-query",
        "zrange-byscore-rev",
        "-r",
        "300",
        "-r-start",
        "5000",
        "-n",
        "500",
        "-c",
        "3",
        "-pipeline",
        "4",
    ]);
    let replies = run(&server, &query);
    assert_eq!(replies.len(), 500);
    for reply in replies {
        match reply {
            Reply::Array(items) => assert!(!items.is_empty()),
            other => panic!("{other:?}"),
        }
    }
}
