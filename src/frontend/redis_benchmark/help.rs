//! The `--help` and `--version` texts of the redis-benchmark front end, laid out as
//! redis-benchmark 7.2 lays out its own, with kvbench's additions in their own section.

use super::suite::known_names;

/// What `--version` prints.
pub fn version_text() -> String {
    format!(
        "redis-benchmark (kvbench {}; redis-benchmark 7.2 command line)\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// What `--help` prints: every flag, its default and what kvbench does with it; its
/// usage line and examples name `program` (`redis-benchmark` through a link of that name,
/// else `kvbench redis-benchmark`).
pub fn help_text(program: &str) -> String {
    redis_benchmark_help()
        .replace("Usage: redis-benchmark ", &format!("Usage: {program} "))
        .replace("\n   $ redis-benchmark", &format!("\n   $ {program}"))
}

/// The help as redis-benchmark words it, its own name in the usage line and examples.
fn redis_benchmark_help() -> String {
    format!(
        "\
Usage: redis-benchmark [OPTIONS] [COMMAND ARGS...]

Options:
 -h <hostname>      Server hostname (default 127.0.0.1)
 -p <port>          Server port (default 6379)
 -s <socket>        Server socket (overrides host and port)
 -a <password>      Password for Redis Auth
 --user <username>  Used to send ACL style 'AUTH username pass'. Needs -a.
 -u <uri>           Server URI: redis://[[user:]password@]host[:port][/db],
                    or rediss://... for TLS.
 -c <clients>       Number of parallel connections (default 50).
                    Note: If --cluster is used then number of clients has to be
                    the same or higher than the number of nodes.
 -n <requests>      Total number of requests (default 100000)
 -d <size>          Data size of SET/GET value in bytes (default 3)
 --dbnum <db>       SELECT the specified db number (default 0)
 -3                 Start session in RESP3 protocol mode.
 --threads <num>    Enable multi-thread mode.
 --cluster          Enable cluster mode.
                    If the command is supplied on the command line in cluster
                    mode, the key must contain \"{{tag}}\". Otherwise, the
                    command will not be sent to the right cluster node.
 --enable-tracking  Send CLIENT TRACKING on before starting benchmark.
 -k <boolean>       1=keep alive 0=reconnect (default 1)
 -r <keyspacelen>   Use random keys for SET/GET/INCR, random values for SADD,
                    random members and scores for ZADD.
                    Using this option the benchmark will expand the string
                    __rand_int__ inside an argument with a 12 digits number in
                    the specified range from 0 to keyspacelen-1. The
                    substitution changes every time a command is executed.
                    Default tests use this to hit random keys in the specified
                    range.
                    Note: If -r is omitted, all commands in a benchmark will
                    use the same key.
 -P <numreq>        Pipeline <numreq> requests. Default 1 (no pipeline).
 -e                 Accepted for compatibility only: an error reply always ends
                    the run (the error is shown on stderr).
 -q                 Quiet. Just show query/sec values
 --precision <n>    Significant figures of the latency histogram, 1 to 4
                    (default 3).
 --csv              Output in CSV format
 -l                 Loop. Run the tests forever
 -t <tests>         Only run the comma separated list of tests. The test
                    names are the same as the ones produced as output.
                    The -t option is ignored if a specific command is supplied
                    on the command line.
{tests}
 -I                 Idle mode. Just open N idle connections and wait.
 -x                 Read last argument from STDIN.
 --seed <num>       Set the seed for random number generator. Default seed is based on time.
 --tls              Establish a secure TLS connection.
 --sni <host>       Server name indication for TLS.
 --cacert <file>    CA Certificate file to verify with.
 --cacertdir <dir>  Directory where trusted CA certificates are stored.
                    If neither cacert nor cacertdir are specified, the default
                    system-wide trusted root certs configuration will apply.
 --insecure         Allow insecure TLS connection by skipping cert validation.
 --cert <file>      Client certificate to authenticate with
                    (PEM, X.509 v3 only).
 --key <file>       Private key file to authenticate with.
 --tls-ciphers <list> Sets the list of preferred ciphers (TLSv1.2 and below)
                    in order of preference from highest to lowest separated by colon (\":\").
                    See the ciphers(1ssl) manpage for more information about the syntax of this string.
                    kvbench offers the ECDHE AES-GCM and CHACHA20 ciphers of TLSv1.2.
 --tls-ciphersuites <list> Sets the list of preferred ciphersuites (TLSv1.3)
                    in order of preference from highest to lowest separated by colon (\":\").
                    kvbench offers TLS_AES_256_GCM_SHA384, TLS_CHACHA20_POLY1305_SHA256
                    and TLS_AES_128_GCM_SHA256.
 --help             Output this help and exit.
 --version          Output version and exit.

kvbench additions:
 --rps <num>        Send at most <num> requests per second in all, spread over the
                    clients. Latency is measured from when each request was due,
                    so a server that falls behind cannot hide the queueing.
 --warmup <secs>    Before each test, send its requests for <secs> seconds
                    without measuring them (on top of the -n measured ones).
 --busy-poll <usec> Before sleeping for replies, poll without waiting for up to
                    <usec> microseconds (0: off, the default): replies are taken
                    at once, not after the thread wakes from idle (tens of
                    microseconds on a VM). Costs each thread's core meanwhile.
 --reply-timeout <secs>
                    Fail the run when requests get no reply for <secs> seconds
                    (default 60; 0 waits for ever, as redis-benchmark does).
 --json-out-file <file>
                    Also write the results to <file> in kvbench's JSON format
                    (read by `kvbench merge` and `kvbench report`).
 --hdr-file-prefix <prefix>
                    Also write each test's latency histogram to HDR files named
                    after <prefix> and the test.

Examples:

 Run the benchmark with the default configuration against 127.0.0.1:6379:
   $ redis-benchmark

 Use 20 parallel clients, for a total of 100k requests, against 192.168.1.1:
   $ redis-benchmark -h 192.168.1.1 -p 6379 -n 100000 -c 20

 Fill 127.0.0.1:6379 with about 1 million keys only using the SET test:
   $ redis-benchmark -t set -n 1000000 -r 100000000

 Benchmark 127.0.0.1:6379 for a few commands producing CSV output:
   $ redis-benchmark -t ping,set,get -n 100000 --csv

 Benchmark a specific command line:
   $ redis-benchmark -r 10000 -n 10000 eval 'return redis.call(\"ping\")' 0

 Fill a list with 10000 random elements:
   $ redis-benchmark -r 10000 -n 10000 lpush mylist __rand_int__

 On user specified command lines __rand_int__ is replaced with a random integer
 with a range of values selected by the -r option.
",
        tests = wrapped_test_names()
    )
}

/// The `-t` names, wrapped to the help text's column.
fn wrapped_test_names() -> String {
    let indent = " ".repeat(20);
    let mut lines = vec![format!("{indent}Tests:")];
    for name in known_names().split(", ") {
        let last = lines.last_mut().expect("starts with one line");
        if last.len() + name.len() + 2 > 80 {
            lines.push(format!("{indent}{name}"));
        } else {
            last.push(' ');
            last.push_str(name);
        }
    }
    lines.join("\n")
}
