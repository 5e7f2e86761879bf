//! The `--monitor-input` capture parser (Redis `MONITOR` lines) on any bytes: what the
//! `monitor` fuzz target asserts.
//!
//! - No panic; an error is one line.
//! - A capture that loads has commands, each RESP-encoded as an array of bulk strings
//!   that the RESP decoder accepts whole, whose first word is the command's type.
//! - The commands written back as `MONITOR` lines (every byte outside printable ASCII as
//!   `\xHH`) load as the same commands.
//!
//! Included by path from the main suite's `tests/fuzz_properties.rs`.

use kvbench::protocol::resp::RespDecoder;
use kvbench::protocol::resp_value::{self, Value};
use kvbench::protocol::{Decode, ReplyKind};
use kvbench::workload::commands::{MonitorInput, command_name};

/// Checks the capture parser on one fuzz input (the capture's bytes).
pub fn check(data: &[u8]) {
    let input = match MonitorInput::parse_bytes(data) {
        Ok(input) => input,
        Err(message) => {
            assert!(!message.contains('\n'), "{message:?}");
            return;
        }
    };
    assert!(!input.is_empty());
    let commands = commands_of(&input);
    assert!(commands.len() <= data.iter().filter(|&&b| b == b'"').count());

    let written = render_capture(&commands);
    let again = match MonitorInput::parse_bytes(&written) {
        Ok(again) => again,
        Err(message) => panic!("the capture written from loaded commands does not load: {message}"),
    };
    assert_eq!(
        commands_of(&again),
        commands,
        "commands written out and read back"
    );
}

/// `commands` as a `MONITOR` capture: a line redis prints before the first command, then
/// one line per command, each argument quoted, `"` and `\\` escaped, and every byte
/// outside printable ASCII written `\xHH`.
pub fn render_capture(commands: &[Vec<Vec<u8>>]) -> Vec<u8> {
    let mut written = b"OK\r\n".to_vec();
    for args in commands {
        written.extend_from_slice(b"1700000000.000001 [0 127.0.0.1:6379]");
        for arg in args {
            written.extend_from_slice(b" \"");
            for &b in arg {
                match b {
                    b'"' | b'\\' => written.extend_from_slice(&[b'\\', b]),
                    0x20..=0x7e => written.push(b),
                    _ => written.extend_from_slice(format!("\\x{b:02x}").as_bytes()),
                }
            }
            written.push(b'"');
        }
        written.extend_from_slice(b"\n");
    }
    written
}

/// Every command of `input` as its arguments, checking each one's encoding on the way.
pub fn commands_of(input: &MonitorInput) -> Vec<Vec<Vec<u8>>> {
    assert_eq!(input.encoded(input.len()), None);
    (0..input.len())
        .map(|i| {
            let Some(encoded) = input.encoded(i) else {
                panic!("command {i} of {} has no encoding", input.len());
            };
            let Decode::Complete(reply) = RespDecoder::new().decode(encoded) else {
                panic!("command {i} is not one whole RESP value: {encoded:?}");
            };
            assert_eq!(reply.len, encoded.len());
            assert_eq!(reply.kind, ReplyKind::Array);
            let Some((Value::Array(items), _)) = resp_value::value(encoded) else {
                panic!("command {i} is not an array: {encoded:?}");
            };
            let args: Vec<Vec<u8>> = items
                .iter()
                .map(|item| match item {
                    Value::Bulk(arg) => arg.to_vec(),
                    other => panic!("command {i} holds {other:?}, not a bulk string"),
                })
                .collect();
            assert!(!args.is_empty() && !args[0].is_empty());
            assert_eq!(input.command_type(i), command_name(&args[0]));
            assert_eq!(input.types()[input.type_id(i)], input.command_type(i));
            args
        })
        .collect()
}
