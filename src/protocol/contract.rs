//! The incremental-decoder contract, written once and checked for the three decoders
//! through [`Codec`]: a reply split anywhere decodes the same, replies pipelined back to
//! back decode in order whatever the read sizes, and bytes that are not a reply never
//! panic and decode the same whole or byte by byte.
//!
//! Each decoder's own tests supply its well-formed replies (`contract_cases`) and the bytes its
//! garbage is made of; the protocol-specific checks (what is refused and why, not
//! rescanning large values) stay beside each decoder.

use crate::protocol::{Codec, Decode, Expect, Protocol};

/// A well-formed reply, the request it answers, and what the decoder must say.
#[derive(Clone, Debug)]
struct Case {
    bytes: Vec<u8>,
    expect: Expect,
    want: Decode,
}

/// The cases a decoder's tests list as `(bytes, expect, want)`.
fn cases(list: Vec<(Vec<u8>, Expect, Decode)>) -> Vec<Case> {
    list.into_iter()
        .map(|(bytes, expect, want)| Case {
            bytes,
            expect,
            want,
        })
        .collect()
}

/// xorshift64*: deterministic, so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Feeding prefixes of increasing length to one decoder (bytes arriving one at a time):
/// `Incomplete` until the last byte, then the reply; the decoder is then ready for the
/// next one.
fn every_prefix(protocol: Protocol, cases: &[Case]) {
    for case in cases {
        let mut codec = Codec::new(protocol);
        for end in 0..case.bytes.len() {
            assert_eq!(
                codec.decode(&case.bytes[..end], case.expect),
                Decode::Incomplete,
                "{protocol:?}: {:?} cut at {end}",
                String::from_utf8_lossy(&case.bytes)
            );
        }
        assert_eq!(codec.decode(&case.bytes, case.expect), case.want);
        assert_eq!(
            codec.decode(&case.bytes, case.expect),
            case.want,
            "{protocol:?}: ready for the next reply"
        );
    }
}

/// Split in two at every position: the first part, then the whole.
fn every_split(protocol: Protocol, cases: &[Case]) {
    for case in cases {
        for cut in 0..case.bytes.len() {
            let mut codec = Codec::new(protocol);
            assert_eq!(
                codec.decode(&case.bytes[..cut], case.expect),
                Decode::Incomplete,
                "{protocol:?}: cut at {cut}"
            );
            assert_eq!(
                codec.decode(&case.bytes, case.expect),
                case.want,
                "{protocol:?}: cut at {cut}"
            );
        }
    }
}

/// Every case back to back in one buffer, then as a client reads them: chunks of
/// `chunk` bytes appended to a read buffer, decoded replies drained from its front.
fn pipelined(protocol: Protocol, cases: &[Case], chunks: &mut dyn FnMut() -> usize) {
    let stream: Vec<u8> = cases.iter().flat_map(|c| c.bytes.clone()).collect();
    let mut codec = Codec::new(protocol);
    let mut at = 0;
    for case in cases {
        assert_eq!(codec.decode(&stream[at..], case.expect), case.want);
        at += case.bytes.len();
    }
    assert_eq!(at, stream.len());

    let mut codec = Codec::new(protocol);
    let mut read_buf = Vec::new();
    let (mut fed, mut next) = (0, 0);
    while fed < stream.len() {
        let n = chunks().clamp(1, stream.len() - fed);
        read_buf.extend_from_slice(&stream[fed..fed + n]);
        fed += n;
        while next < cases.len() {
            match codec.decode(&read_buf, cases[next].expect) {
                Decode::Incomplete => break,
                got => {
                    assert_eq!(got, cases[next].want, "{protocol:?}: reply {next}");
                    let Decode::Complete(reply) = got else {
                        unreachable!("the expected outcome of a well-formed case")
                    };
                    read_buf.drain(..reply.len);
                    next += 1;
                }
            }
        }
    }
    assert_eq!(next, cases.len(), "{protocol:?}");
    assert!(read_buf.is_empty(), "{protocol:?}");
}

/// The decoder on `buf` whole and byte by byte: no panic, results within the buffer,
/// and the incremental result equal to the whole one.
fn consistent(protocol: Protocol, buf: &[u8], expect: Expect) -> Decode {
    let whole = Codec::new(protocol).decode(buf, expect);
    if let Decode::Complete(r) = whole {
        assert!(r.len <= buf.len() && r.len > 0, "{protocol:?}: {buf:?}");
        assert!(r.payload.0 + r.payload.1 <= r.len, "{protocol:?}: {buf:?}");
    }
    let mut codec = Codec::new(protocol);
    for end in 0..=buf.len() {
        match codec.decode(&buf[..end], expect) {
            Decode::Incomplete => continue,
            Decode::Invalid(_) => {
                assert!(
                    matches!(whole, Decode::Invalid(_)),
                    "{protocol:?}: {buf:?} {expect:?}: invalid byte by byte, {whole:?} whole"
                );
                return whole;
            }
            got => {
                assert_eq!(got, whole, "{protocol:?}: {buf:?} {expect:?}");
                return whole;
            }
        }
    }
    assert_eq!(
        whole,
        Decode::Incomplete,
        "{protocol:?}: {buf:?} {expect:?}"
    );
    whole
}

/// Random bytes (from `alphabet` and from anywhere), and well-formed replies with one
/// byte changed, inserted or removed, against every expectation: never a panic, always
/// consistent; and both refusals and replies were reached, so the checks had work.
fn garbage(protocol: Protocol, cases: &[Case], alphabet: &[u8], first: Option<u8>) {
    let expects = [
        Expect::Store,
        Expect::Get,
        Expect::MultiGet(0),
        Expect::MultiGet(1),
        Expect::MultiGet(3),
        Expect::Auth,
        Expect::Probe,
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut invalid, mut complete) = (0, 0);
    for round in 0..6000 {
        let mut buf: Vec<u8> = match round % 3 {
            0 => (0..rng.below(64)).map(|_| rng.next() as u8).collect(),
            1 => (0..rng.below(64))
                .map(|_| alphabet[rng.below(alphabet.len())])
                .collect(),
            _ => {
                let mut buf = cases[rng.below(cases.len())].bytes.clone();
                let at = rng.below(buf.len());
                match rng.below(3) {
                    0 => buf[at] = alphabet[rng.below(alphabet.len())],
                    1 => buf.insert(at, rng.next() as u8),
                    _ => {
                        buf.remove(at);
                    }
                }
                buf
            }
        };
        // A first byte random data would almost never have (the binary magic).
        if let Some(first) = first
            && round % 4 == 0
            && !buf.is_empty()
        {
            buf[0] = first;
        }
        for expect in expects {
            match consistent(protocol, &buf, expect) {
                Decode::Invalid(_) => invalid += 1,
                Decode::Complete(_) => complete += 1,
                Decode::Incomplete => {}
            }
        }
    }
    assert!(
        invalid > 1000 && complete > 100,
        "{protocol:?}: invalid {invalid}, complete {complete}"
    );
}

/// Checks the whole contract for one decoder.
fn check(protocol: Protocol, cases: &[Case], alphabet: &[u8], first: Option<u8>) {
    assert!(!cases.is_empty());
    every_prefix(protocol, cases);
    every_split(protocol, cases);
    pipelined(protocol, cases, &mut || 7);
    pipelined(protocol, cases, &mut || 5);
    let mut rng = Rng(3);
    pipelined(protocol, cases, &mut || 1 + rng.below(50_000));
    garbage(protocol, cases, alphabet, first);
}

#[test]
fn resp_keeps_the_contract() {
    let cases = cases(crate::protocol::resp::tests::contract_cases());
    check(
        Protocol::Resp3,
        &cases,
        b"+-:$*_,#(=!%~>|\r\n\r\n0123456789-1tfinax.e ",
        None,
    );
}

#[test]
fn memcache_text_keeps_the_contract() {
    let cases = cases(crate::protocol::memcache_text::tests::contract_cases());
    check(
        Protocol::MemcacheText,
        &cases,
        b"VALUE NDSTORXIC_\r\n0123456789 ",
        None,
    );
}

#[test]
fn memcache_binary_keeps_the_contract() {
    let cases = cases(crate::protocol::memcache_binary::tests::contract_cases());
    check(
        Protocol::MemcacheBinary,
        &cases,
        &[0x81, 0x00, 0x01, 0x0a, 0x0c, 0x21, 0x20, 0xff, 0x04, 0x05],
        Some(crate::protocol::memcache_binary::MAGIC_RESPONSE),
    );
}
