//! The incremental-decoder contract, checked on any bytes: what the fuzz targets `resp`,
//! `memcache_text` and `memcache_binary` assert, and what the main suite's property tests
//! assert on generated replies.
//!
//! For a byte stream decoded against one request kind ([`Expect`]), reply after reply:
//! - no panic, and every answer lies inside the bytes given (`0 < len <= buf.len()`, the
//!   payload inside the reply);
//! - an answer depends on its own bytes only: the reply alone decodes the same, and every
//!   shorter prefix is `Incomplete`, never `Invalid` or an answer ("`Incomplete` never
//!   turns into an answer that needed fewer bytes");
//! - bytes arriving one at a time, or in pieces split at any points, give the answer the
//!   whole buffer gives (`Invalid` for `Invalid`); a prefix the whole buffer refuses is
//!   `Incomplete` or `Invalid`, never an answer;
//! - `bytes_needed_hint` never promises more bytes than the reply turns out to need;
//! - a client's reads (chunks appended to a buffer, decoded replies drained from its
//!   front) give the same answers, in the same order, as the stream decoded whole;
//! - what the engine then reads out of an answer agrees with it: for RESP the value tree
//!   and the token walk ([`resp_value`]), the SCAN cursor, MOVED/ASK and the
//!   `CLUSTER SLOTS` map; for memcache the hit and miss counts and the binary header.
//!
//! Included by path from the main suite's `tests/fuzz_properties.rs`: it uses only
//! `kvbench`'s public API and std.

use kvbench::engine::cluster::{self, Redirect};
use kvbench::protocol::memcache_binary;
use kvbench::protocol::resp_value::{self, Value};
use kvbench::protocol::{Codec, Decode, Expect, Protocol, Reply, ReplyKind};

/// One fuzz input for a decoder: the request kind, where to cut, and the reply bytes.
///
/// ```text
/// byte 0      expect: 0 Store, 1 Get, 2 MultiGet(n), 3 Auth, 4 Probe, 5 Setup
///             (byte 0 % 6); n = byte 0 / 6 % 8
/// byte 1      k = byte 1 % 8 cut points
/// 2k bytes    the cut points, u16 little endian, each taken modulo (stream length + 1)
/// the rest    the stream of replies
/// ```
#[derive(Clone, Debug)]
pub struct Input<'a> {
    pub expect: Expect,
    pub cuts: Vec<usize>,
    pub stream: &'a [u8],
}

impl<'a> Input<'a> {
    /// Reads the layout above; any bytes are an input (short ones are an empty stream).
    pub fn parse(data: &'a [u8]) -> Input<'a> {
        let selector = data.first().copied().unwrap_or(0);
        let expect = match selector % 6 {
            0 => Expect::Store,
            1 => Expect::Get,
            2 => Expect::MultiGet(u32::from(selector / 6 % 8)),
            3 => Expect::Auth,
            4 => Expect::Probe,
            _ => Expect::Setup,
        };
        let k = usize::from(data.get(1).copied().unwrap_or(0) % 8);
        let header = (2 + 2 * k).min(data.len());
        let stream = &data[header..];
        let cuts = data[2.min(data.len())..header]
            .chunks_exact(2)
            .map(|c| usize::from(u16::from_le_bytes([c[0], c[1]])) % (stream.len() + 1))
            .collect();
        Input {
            expect,
            cuts,
            stream,
        }
    }
}

/// Checks the whole contract for `protocol` on one fuzz input.
pub fn check(protocol: Protocol, data: &[u8]) {
    let input = Input::parse(data);
    check_stream(protocol, input.expect, input.stream, &input.cuts);
}

/// Checks the contract on `stream` decoded against `expect`, cut at `cuts` (any order,
/// any values: those past the end are ignored). Returns what the stream decoded to,
/// reply after reply: every `Complete`, then the `Invalid` or `Incomplete` that ended it.
pub fn check_stream(
    protocol: Protocol,
    expect: Expect,
    stream: &[u8],
    cuts: &[usize],
) -> Vec<Decode> {
    let mut outcomes = Vec::new();
    let mut codec = Codec::new(protocol);
    let mut at = 0;
    loop {
        let rest = &stream[at..];
        let got = codec.decode(rest, expect);
        let fresh = Codec::new(protocol).decode(rest, expect);
        assert_eq!(
            got, fresh,
            "{protocol:?}: a decoder that just answered was not ready for the next reply"
        );
        let cuts_here: Vec<usize> = cuts
            .iter()
            .filter(|&&c| c > at && c < stream.len())
            .map(|c| c - at)
            .collect();
        check_one(protocol, expect, rest, got, &cuts_here);
        outcomes.push(got);
        match got {
            Decode::Complete(reply) if at + reply.len < stream.len() => at += reply.len,
            _ => break,
        }
    }
    as_a_client_reads(protocol, expect, stream, cuts, &outcomes);
    outcomes
}

/// The reply (or refusal) at the start of `buf`, which decoded whole to `whole`.
fn check_one(protocol: Protocol, expect: Expect, buf: &[u8], whole: Decode, cuts: &[usize]) {
    let needs = match whole {
        Decode::Complete(reply) => {
            assert!(
                reply.len > 0 && reply.len <= buf.len(),
                "{protocol:?}: {reply:?} outside {} bytes",
                buf.len()
            );
            let (offset, len) = reply.payload;
            assert!(
                offset.checked_add(len).is_some_and(|end| end <= reply.len),
                "{protocol:?}: payload outside {reply:?}"
            );
            assert_eq!(reply.text(buf).len(), len);
            let alone = &buf[..reply.len];
            assert_eq!(
                Codec::new(protocol).decode(alone, expect),
                whole,
                "{protocol:?}: the reply alone decodes differently"
            );
            check_meaning(protocol, expect, alone, &reply);
            Some(reply.len)
        }
        Decode::Invalid(_) | Decode::Incomplete => None,
    };

    // Byte by byte, one decoder: `Incomplete` until the reply's last byte.
    let mut codec = Codec::new(protocol);
    let last = needs.unwrap_or(buf.len());
    for end in 0..=last {
        let got = codec.decode(&buf[..end], expect);
        match got {
            Decode::Incomplete => {
                let hint = codec.bytes_needed_hint();
                if let Some(needs) = needs {
                    assert!(
                        hint <= needs,
                        "{protocol:?}: hint {hint} at {end} bytes, but the reply is {needs}"
                    );
                }
                if end == last {
                    assert!(
                        needs.is_none() && matches!(whole, Decode::Incomplete),
                        "{protocol:?}: {whole:?} whole, still incomplete byte by byte at {end}"
                    );
                }
            }
            Decode::Complete(_) => {
                assert_eq!(
                    Some(end),
                    needs,
                    "{protocol:?}: answered {got:?} at {end} bytes, whole {whole:?}"
                );
                assert_eq!(got, whole, "{protocol:?}: byte by byte");
                break;
            }
            Decode::Invalid(_) => {
                assert!(
                    matches!(whole, Decode::Invalid(_)),
                    "{protocol:?}: invalid at {end} bytes byte by byte, {whole:?} whole"
                );
                break;
            }
        }
    }

    // Fresh decoders on each cut prefix, and one decoder fed the cuts in order.
    let mut sorted: Vec<usize> = cuts.iter().copied().filter(|&c| c < buf.len()).collect();
    sorted.sort_unstable();
    sorted.dedup();
    let mut codec = Codec::new(protocol);
    let mut finished = false;
    for &cut in &sorted {
        let fresh = Codec::new(protocol).decode(&buf[..cut], expect);
        match (needs, fresh) {
            (Some(needs), Decode::Complete(_)) if cut >= needs => assert_eq!(fresh, whole),
            (Some(needs), Decode::Incomplete) if cut < needs => {}
            (None, Decode::Incomplete) => {}
            (None, Decode::Invalid(_)) if matches!(whole, Decode::Invalid(_)) => {}
            _ => panic!(
                "{protocol:?}: {cut}-byte prefix decodes to {fresh:?}, the whole {} bytes to {whole:?}",
                buf.len()
            ),
        }
        if !finished {
            let got = codec.decode(&buf[..cut], expect);
            assert_eq!(
                std::mem::discriminant(&got),
                std::mem::discriminant(&fresh),
                "{protocol:?}: {cut}-byte prefix after earlier pieces: {got:?}, fresh: {fresh:?}"
            );
            if let Decode::Complete(_) = got {
                assert_eq!(got, fresh);
            }
            finished = !matches!(got, Decode::Incomplete);
        }
    }
    if !finished {
        let got = codec.decode(buf, expect);
        assert_eq!(
            std::mem::discriminant(&got),
            std::mem::discriminant(&whole),
            "{protocol:?}: in pieces {got:?}, whole {whole:?}"
        );
        if let Decode::Complete(_) = got {
            assert_eq!(got, whole, "{protocol:?}: in pieces");
        }
    }
}

/// A client's reads: the stream arrives in chunks ending at `cuts`, each appended to a
/// read buffer; every complete reply is drained from its front. The answers must be the
/// ones the stream gave decoded whole.
fn as_a_client_reads(
    protocol: Protocol,
    expect: Expect,
    stream: &[u8],
    cuts: &[usize],
    whole: &[Decode],
) {
    let mut ends: Vec<usize> = cuts
        .iter()
        .copied()
        .filter(|&c| c > 0 && c < stream.len())
        .collect();
    ends.push(stream.len());
    ends.sort_unstable();
    ends.dedup();
    let mut codec = Codec::new(protocol);
    let mut read_buf: Vec<u8> = Vec::new();
    let mut got: Vec<Decode> = Vec::new();
    let mut fed = 0;
    'reads: for end in ends {
        read_buf.extend_from_slice(&stream[fed..end]);
        fed = end;
        loop {
            match codec.decode(&read_buf, expect) {
                Decode::Incomplete => break,
                Decode::Complete(reply) => {
                    got.push(Decode::Complete(reply));
                    read_buf.drain(..reply.len);
                }
                invalid @ Decode::Invalid(_) => {
                    got.push(invalid);
                    break 'reads;
                }
            }
        }
    }
    if fed == stream.len() && !matches!(got.last(), Some(Decode::Invalid(_))) {
        got.push(Decode::Incomplete);
    }
    // A stream whose last reply ends exactly at its end decoded whole to that reply last;
    // as read, the empty buffer after it says `Incomplete`.
    let mut want = whole.to_vec();
    if let Some(Decode::Complete(_)) = want.last() {
        want.push(Decode::Incomplete);
    }
    assert_eq!(
        got.len(),
        want.len(),
        "{protocol:?}: as read {got:?}, whole {want:?}"
    );
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(
            std::mem::discriminant(g),
            std::mem::discriminant(w),
            "{protocol:?}: as read {got:?}, whole {want:?}"
        );
        if let Decode::Complete(_) = g {
            assert_eq!(g, w);
        }
    }
}

/// What the engine reads out of an accepted reply agrees with the decoder's answer.
fn check_meaning(protocol: Protocol, expect: Expect, bytes: &[u8], reply: &Reply) {
    match protocol {
        Protocol::Redis | Protocol::Resp2 | Protocol::Resp3 => resp_meaning(bytes, reply),
        Protocol::MemcacheText | Protocol::MemcacheBinary => {
            let kinds: &[ReplyKind] = match expect {
                Expect::Store | Expect::Setup | Expect::Auth | Expect::Probe => {
                    &[ReplyKind::Simple, ReplyKind::Error]
                }
                Expect::Get => &[ReplyKind::Bulk, ReplyKind::Nil, ReplyKind::Error],
                Expect::MultiGet(_) => &[ReplyKind::Array, ReplyKind::Error],
            };
            assert!(
                kinds.contains(&reply.kind),
                "{protocol:?}: {reply:?} answers {expect:?}"
            );
            if let Expect::MultiGet(n) = expect
                && (reply.kind == ReplyKind::Array || protocol == Protocol::MemcacheBinary)
            {
                assert_eq!(
                    reply.elements.checked_add(reply.nil_elements),
                    Some(n),
                    "{protocol:?}: hits and misses of {n} keys: {reply:?}"
                );
            }
            if protocol == Protocol::MemcacheBinary {
                assert!(bytes.len() >= memcache_binary::HEADER_LEN);
                assert!(memcache_binary::opaque_of(bytes).is_some());
                assert!(memcache_binary::status_of(bytes).is_some());
            }
        }
    }
}

/// A RESP reply the decoder accepted: the value tree and token walk read it whole and
/// agree with the decoder on its kind, payload, element and nil counts; SCAN cursors,
/// redirections and slot maps read from it stay in range.
fn resp_meaning(bytes: &[u8], reply: &Reply) {
    let Some((value, used)) = resp_value::value(bytes) else {
        panic!("the value reader refused a reply the decoder accepted: {reply:?}");
    };
    assert_eq!(used, reply.len);
    let text = reply.text(bytes);
    let nils = |items: &[Value]| items.iter().filter(|v| **v == Value::Nil).count();
    match (&value, reply.kind) {
        (Value::Simple(t), ReplyKind::Simple) | (Value::Error(t), ReplyKind::Error) => {
            assert_eq!(*t, text)
        }
        (Value::Bulk(t), ReplyKind::Bulk | ReplyKind::Verbatim) => assert_eq!(*t, text),
        (Value::Int(_), ReplyKind::Integer) | (Value::Nil, ReplyKind::Nil) => {}
        (Value::Other(_), ReplyKind::Double | ReplyKind::Boolean | ReplyKind::BigNumber) => {}
        (Value::Array(items), ReplyKind::Array | ReplyKind::Set | ReplyKind::Push) => {
            assert_eq!(items.len(), reply.elements as usize);
            assert_eq!(nils(items), reply.nil_elements as usize);
        }
        (Value::Array(items), ReplyKind::Map) => {
            assert_eq!(items.len(), 2 * reply.elements as usize);
            assert_eq!(nils(items), reply.nil_elements as usize);
        }
        _ => panic!("value {value:?} for a reply of kind {:?}", reply.kind),
    }
    assert!(resp_value::tokens(bytes).next().is_some());
    if let (Value::Array(items), Some(cursor)) = (&value, resp_value::first_bulk(bytes)) {
        assert_eq!(items.first(), Some(&Value::Bulk(cursor)));
    }
    if reply.kind == ReplyKind::Error {
        redirect_round_trip(text);
    }
    slot_map_in_range(&value);
}

/// `MOVED`/`ASK` parsing: a parsed redirection names a real slot and reads back the same
/// when written out again.
pub fn redirect_round_trip(text: &[u8]) {
    let Some(redirect) = cluster::parse_redirect(text) else {
        return;
    };
    let (word, slot, host, port) = match &redirect {
        Redirect::Moved { slot, host, port } => ("MOVED", slot, host, port),
        Redirect::Ask { slot, host, port } => ("ASK", slot, host, port),
        Redirect::TryAgain => {
            assert!(text.starts_with(b"TRYAGAIN"));
            return;
        }
    };
    assert!(usize::from(*slot) < cluster::SLOTS);
    let again = format!("{word} {slot} [{host}]:{port}");
    assert_eq!(
        cluster::parse_redirect(again.as_bytes()),
        Some(redirect),
        "{again}"
    );
}

/// A `CLUSTER SLOTS` map read from any value: every slot owned by a listed node or none.
pub fn slot_map_in_range(value: &Value) {
    if let Ok(map) = cluster::slot_map(value, "seed") {
        assert_eq!(map.slot_owner.len(), cluster::SLOTS);
        assert!(!map.nodes.is_empty());
        for &owner in &map.slot_owner {
            assert!(
                owner == u16::MAX || usize::from(owner) < map.nodes.len(),
                "slot owner {owner} of {} nodes",
                map.nodes.len()
            );
        }
    }
}
