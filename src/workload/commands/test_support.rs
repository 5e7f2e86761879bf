//! Fixtures shared by the command tests: a MONITOR capture and an obviously right RESP
//! encoder to compare with.

use crate::workload::commands::{CommandTemplate, MonitorInput};

/// The template encoded with one key and one value for every placeholder.
pub(crate) fn encode(t: &CommandTemplate, key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let n = t.encode_resp(&mut out, key, data, None, 0);
    assert_eq!(n, out.len());
    out
}

/// The reference encoding: an independent, obviously right RESP array writer.
pub(crate) fn resp(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// A capture with escapes, an unclosed quote, a HELLO and a blank line.
pub(crate) const CAPTURE: &str = "OK\n\
    1700000000.123456 [0 127.0.0.1:50000] \"SET\" \"key1\" \"value1\"\n\
    [ proxy47 ] 1700000000.2 [0 127.0.0.1:39564] \"get\" \"key1\"\n\
    1700000000.3 [0 lua] \"HSET\" \"h\" \"f\" \"a \\\"quoted\\\" \\\\ \\x00\\xff\\n\\r\\t\"\n\
    1700000000.4 [0 127.0.0.1:50000] \"SET\" \"key2\" \"unclosed\n\
    1700000000.5 [0 127.0.0.1:50000] \"HELLO\" \"3\"\n\
    \n\
    1700000000.6 [0 127.0.0.1:50000] \"SET\" \"key3\" \"v3\"\n";

pub(crate) fn capture() -> MonitorInput {
    MonitorInput::parse(CAPTURE).unwrap()
}
