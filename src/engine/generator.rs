//! One client's request stream: which operation comes next, on which key(s), with what
//! value size, TTL or WAIT arguments.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Normal};

use crate::plan::{Plan, StopAt, WaitConfig};
use crate::workload::indexed_draws::IndexedDraws;
use crate::workload::keys::{Coverage, KeyGenerator};
use crate::workload::sequence::{CommandSequence, OpKind, RatioSequence};
use crate::workload::values::ValueSizer;

/// The seed every client shares unless `--distinct-client-seed` or `--randomize` is given:
/// like memtier, the same flags send the same keys.
const DEFAULT_SEED: u64 = 0x6b76_6265_6e63_6821;

/// The next request a client is to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Store a value; `expiry_secs` 0 means no TTL.
    Set {
        key_id: u64,
        value_size: usize,
        expiry_secs: u32,
    },
    Get {
        key_id: u64,
    },
    /// Read `--multi-key-get` keys at once; the ids are in [`OpGenerator::multi_keys`].
    MultiGet,
    /// Redis `WAIT numreplicas timeout`.
    Wait {
        replicas: u32,
        timeout_ms: u32,
    },
    /// Arbitrary command `index` of the `--command` list; its `__key__` ids are in
    /// [`OpGenerator::multi_keys`], `value_size` is for its `__data__`.
    Command {
        index: usize,
        value_size: usize,
    },
    /// A `--data-verify` read of key `index` (made by the verification pass, never by
    /// the generator).
    Verify {
        index: u64,
    },
    /// The plan's request template, its fields filled as it is encoded.
    Template,
    /// The protocol's liveness probe (`PING`, memcached `version`).
    Probe,
    /// The client's request stream's command: `held` is its copy kept for a resend in
    /// cluster mode (`client::held`), or `NOT_HELD` (in the client's stream buffer).
    Stream {
        held: u32,
    },
}

/// A request of the plain shape ([`OpGenerator::next_plain_ops`]): a SET with no TTL, or
/// a GET, of one generated key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlainOp {
    Set { key_id: u64, value_size: usize },
    Get { key_id: u64 },
}

impl PlainOp {
    /// The same request as an [`Op`].
    #[inline(always)]
    pub fn op(self) -> Op {
        match self {
            PlainOp::Set { key_id, value_size } => Op::Set {
                key_id,
                value_size,
                expiry_secs: 0,
            },
            PlainOp::Get { key_id } => Op::Get { key_id },
        }
    }
}

/// The `--command` sequence and one key generator per command (each has its own pattern).
struct CommandOps {
    sequence: CommandSequence,
    keys: Vec<KeyGenerator>,
    key_counts: Vec<usize>,
    /// Whether each command sends a value (`__data__`): only those take a value size, so
    /// a size list's turns go to the values actually sent.
    sends_value: Vec<bool>,
}

/// Generates one client's operations: SET:GET sequence, WAITs, key patterns, sizes, TTLs.
///
/// Laid out in declaration order (`repr(C)`): what the plain closed loop's draws read
/// comes first, [`HOT_BYTES`](Self::HOT_BYTES) of it, and a client places the generator
/// at the end of its own hot fields (see [`Client`](crate::engine::client::Client)).
#[repr(C)]
pub struct OpGenerator {
    // The plain draws' fields.
    sequence: RatioSequence,
    set_keys: KeyGenerator,
    get_keys: KeyGenerator,
    sizes: ValueSizer,
    rng: SmallRng,
    /// Every request is a single-key SET (no TTL, no WAIT after it) or GET of the
    /// SET:GET sequence: no probe, template, command list, multi-key GET, expiry or WAIT.
    plain: bool,
    /// Every request is the plan's template.
    template: bool,
    /// Every request is the liveness probe.
    probe: bool,
    // The rest.
    multi_key_get: u32,
    multi_keys: Vec<u64>,
    expiry_range: Option<(u32, u32)>,
    wait: Option<WaitConfig>,
    wait_timeout: Option<Normal<f64>>,
    commands: Option<CommandOps>,
    /// SETs since the last WAIT burst, and WAITs still owed in the current burst.
    sets_since_wait: u32,
    waits_due: u32,
    /// Template fields drawn by the request's place in the run (`Seeding::by_request_index`),
    /// the place of the next request this client sends, and how many of its next
    /// requests have places (taken from the shared budget; a warm-up request or one
    /// given back after a redirection has none and draws from the client's generator).
    indexed: Option<IndexedDraws>,
    next_index: u64,
    numbered: u64,
    /// Requests to send before the numbered ones, without places.
    unnumbered_first: u64,
}

/// Where a request template's random fields come from (see
/// [`OpGenerator::template_draws`]).
pub enum TemplateDraws<'a> {
    Client(&'a mut SmallRng),
    Indexed(&'a mut IndexedDraws),
}

impl TemplateDraws<'_> {
    /// A number below `n` (`n` > 0).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        match self {
            TemplateDraws::Client(rng) => rng.random_range(0..n),
            TemplateDraws::Indexed(draws) => draws.below(n),
        }
    }
}

/// The seed for client `client_index` (over all threads) of a run; each shard of a
/// split workload draws from a base seed of its own.
pub fn client_seed(plan: &Plan, client_index: usize, run_seed: u64) -> u64 {
    let base = plan.load.shard.seed(if plan.workload.seeding.randomize {
        run_seed
    } else {
        plan.workload.seeding.base.unwrap_or(DEFAULT_SEED)
    });
    if plan.workload.seeding.distinct_per_client {
        base.wrapping_add(client_index as u64 + 1)
    } else {
        base
    }
}

impl OpGenerator {
    /// Bytes at the start of a generator that the plain draws read: its fields up to the
    /// end of the last flag a visit asks (`probe`).
    pub const HOT_BYTES: usize = std::mem::offset_of!(OpGenerator, probe) + size_of::<bool>();

    /// A generator for client `client_index` of `plan.total_clients()`. Key patterns
    /// that split the range between clients split it over every shard's clients.
    pub fn new(plan: &Plan, client_index: usize, seed: u64) -> Result<OpGenerator, String> {
        let (client_index, total) = plan.client_of_all_shards(client_index);
        // `-n allkeys` shares one pass over the range between the clients (of every
        // shard); otherwise each S client walks from the minimum, as memtier's do.
        let coverage = match plan.load.stop {
            StopAt::AllKeys => Coverage::OnePass,
            _ => Coverage::EachClient,
        };
        let set_keys = KeyGenerator::new(
            plan.workload.keys.set_pattern,
            &plan.workload.keys,
            client_index,
            total,
            coverage,
        )
        .map_err(|e| format!("set key pattern: {e}"))?;
        let get_keys = KeyGenerator::new(
            plan.workload.keys.get_pattern,
            &plan.workload.keys,
            client_index,
            total,
            coverage,
        )
        .map_err(|e| format!("get key pattern: {e}"))?;
        let wait = plan.load.shape.wait;
        // The timeout is normal around the middle of the range, 99.7% of it inside.
        let wait_timeout = wait.and_then(|w| {
            let (lo, hi) = (f64::from(w.timeout_ms.0), f64::from(w.timeout_ms.1));
            Normal::new((lo + hi) / 2.0, (hi - lo) / 6.0).ok()
        });
        let commands = match &plan.workload.arbitrary {
            Some(arbitrary) => {
                let mut keys = Vec::with_capacity(arbitrary.list.commands.len());
                for cmd in &arbitrary.list.commands {
                    keys.push(
                        KeyGenerator::new(
                            cmd.key_pattern,
                            &plan.workload.keys,
                            client_index,
                            total,
                            coverage,
                        )
                        .map_err(|e| format!("key pattern of command \"{}\": {e}", cmd.line))?,
                    );
                }
                Some(CommandOps {
                    sequence: arbitrary.list.sequence(),
                    keys,
                    key_counts: arbitrary
                        .list
                        .commands
                        .iter()
                        .map(|c| c.template.key_count())
                        .collect(),
                    sends_value: arbitrary
                        .list
                        .commands
                        .iter()
                        .map(|c| c.template.data_count() > 0)
                        .collect(),
                })
            }
            None => None,
        };
        let plain = !plan.workload.probe
            && plan.workload.template.is_none()
            && commands.is_none()
            && plan.load.shape.multi_key_get == 0
            && plan.load.shape.expiry_range.is_none()
            && wait.is_none();
        Ok(OpGenerator {
            plain,
            commands,
            template: plan.workload.template.is_some(),
            probe: plan.workload.probe,
            sequence: RatioSequence::new(plan.workload.ratio.0, plan.workload.ratio.1),
            set_keys,
            get_keys,
            sizes: ValueSizer::new(&plan.workload.data_size, &plan.workload.keys),
            rng: SmallRng::seed_from_u64(seed),
            multi_key_get: plan.load.shape.multi_key_get,
            multi_keys: Vec::with_capacity(plan.load.shape.multi_key_get as usize),
            expiry_range: plan.load.shape.expiry_range,
            wait,
            wait_timeout,
            sets_since_wait: 0,
            waits_due: 0,
            indexed: plan.workload.seeding.by_request_index.then(|| {
                let base = plan.workload.seeding.base.unwrap_or(DEFAULT_SEED);
                IndexedDraws::new(plan.load.shard.seed(base))
            }),
            next_index: 0,
            numbered: 0,
            unnumbered_first: 0,
        })
    }

    /// The next operation to send.
    #[inline(always)]
    pub fn next_op(&mut self) -> Op {
        if self.plain {
            // The common shape, decided once: the same draws as the general path below.
            return match self.sequence.next() {
                OpKind::Set => {
                    let key_id = self.set_keys.next(&mut self.rng);
                    Op::Set {
                        key_id,
                        value_size: self.sizes.next(key_id, &mut self.rng),
                        expiry_secs: 0,
                    }
                }
                OpKind::Get => Op::Get {
                    key_id: self.get_keys.next(&mut self.rng),
                },
            };
        }
        if self.template && !self.probe {
            // redis-benchmark's tests: every request is the template. Answered here, not
            // by `next_general` (kept out of line for the plain path), whose call cost the
            // template's plain path 30 instructions per request.
            return Op::Template;
        }
        self.next_general()
    }

    /// Whether every request is a plain SET or GET (see [`next_plain_ops`](Self::next_plain_ops)).
    pub fn is_plain(&self) -> bool {
        self.plain
    }

    /// The next `out.len()` requests of a plain generator, drawn as
    /// [`next_op`](Self::next_op) draws them, in the same order. A batch at once, with
    /// the random state in a local for the whole batch (kept in registers, not loaded and
    /// stored back per draw).
    pub fn next_plain_ops(&mut self, out: &mut [PlainOp]) {
        debug_assert!(self.plain);
        let ids = (self.set_keys.uniform(), self.get_keys.uniform());
        if let (Some(set_ids), Some(get_ids), Some(value_size)) = (ids.0, ids.1, self.sizes.fixed())
        {
            // The default shape (random keys, one value size): the sequence too in a
            // local, and no call through which the random state would leave registers.
            let mut rng = self.rng.clone();
            let mut sequence = self.sequence.clone();
            for slot in out.iter_mut() {
                *slot = match sequence.next() {
                    OpKind::Set => PlainOp::Set {
                        key_id: set_ids.sample(&mut rng),
                        value_size,
                    },
                    OpKind::Get => PlainOp::Get {
                        key_id: get_ids.sample(&mut rng),
                    },
                };
            }
            self.rng = rng;
            self.sequence = sequence;
            return;
        }
        let mut rng = self.rng.clone();
        for slot in out.iter_mut() {
            *slot = match self.sequence.next() {
                OpKind::Set => {
                    let key_id = self.set_keys.next(&mut rng);
                    PlainOp::Set {
                        key_id,
                        value_size: self.sizes.next(key_id, &mut rng),
                    }
                }
                OpKind::Get => PlainOp::Get {
                    key_id: self.get_keys.next(&mut rng),
                },
            };
        }
        self.rng = rng;
    }

    /// [`next_op`](Self::next_op) for every shape but the plain one.
    #[inline(never)]
    fn next_general(&mut self) -> Op {
        if self.probe {
            return Op::Probe;
        }
        if self.template {
            return Op::Template;
        }
        if let Some(commands) = self.commands.as_mut() {
            let index = commands.sequence.next();
            self.multi_keys.clear();
            for _ in 0..commands.key_counts[index] {
                let key = commands.keys[index].next(&mut self.rng);
                self.multi_keys.push(key);
            }
            let key_id = self.multi_keys.first().copied().unwrap_or(0);
            let value_size = match commands.sends_value[index] {
                true => self.sizes.next(key_id, &mut self.rng),
                false => 0,
            };
            return Op::Command { index, value_size };
        }
        if self.waits_due > 0 {
            self.waits_due -= 1;
            return self.wait_op();
        }
        match self.sequence.next() {
            OpKind::Set => {
                let key_id = self.set_keys.next(&mut self.rng);
                let value_size = self.sizes.next(key_id, &mut self.rng);
                let expiry_secs = match self.expiry_range {
                    Some((lo, hi)) => self.rng.random_range(lo..=hi),
                    None => 0,
                };
                if let Some(wait) = self.wait {
                    self.sets_since_wait += 1;
                    if self.sets_since_wait >= wait.sets {
                        self.sets_since_wait = 0;
                        self.waits_due = wait.waits;
                    }
                }
                Op::Set {
                    key_id,
                    value_size,
                    expiry_secs,
                }
            }
            OpKind::Get if self.multi_key_get > 0 => {
                // Like memtier, an MGET takes at most the GETs left in this ratio cycle,
                // so `--ratio=1:10 --multi-key-get=4` sends SET, MGET×4, MGET×4, MGET×2;
                // and `--multi-key-get=1` is an MGET of one key, as memtier sends it, not
                // a GET (the server's MGET count is what a memtier user compares with).
                let extra =
                    (u64::from(self.multi_key_get) - 1).min(self.sequence.gets_left_in_cycle());
                self.sequence.skip(extra);
                self.multi_keys.clear();
                for _ in 0..=extra {
                    let key = self.get_keys.next(&mut self.rng);
                    self.multi_keys.push(key);
                }
                Op::MultiGet
            }
            OpKind::Get => Op::Get {
                key_id: self.get_keys.next(&mut self.rng),
            },
        }
    }

    fn wait_op(&mut self) -> Op {
        let Some(wait) = self.wait else {
            return Op::Get {
                key_id: self.get_keys.next(&mut self.rng),
            };
        };
        let replicas = self.rng.random_range(wait.num_slaves.0..=wait.num_slaves.1);
        let timeout_ms = match &self.wait_timeout {
            Some(normal) => normal
                .sample(&mut self.rng)
                .round()
                .clamp(f64::from(wait.timeout_ms.0), f64::from(wait.timeout_ms.1))
                as u32,
            None => wait.timeout_ms.0,
        };
        Op::Wait {
            replicas,
            timeout_ms,
        }
    }

    /// The key ids of the last [`Op::MultiGet`] or [`Op::Command`].
    pub fn multi_keys(&self) -> &[u64] {
        &self.multi_keys
    }

    /// The generator's random source, shared with value selection so one seed fixes a run.
    pub fn rng(&mut self) -> &mut SmallRng {
        &mut self.rng
    }

    /// After `first` requests of its own (given back after a redirection: no place),
    /// the `count` requests this client sends next are the run's `start`th and on
    /// (taken from a shared budget), for template fields drawn by place.
    #[inline]
    pub fn number_requests(&mut self, first: u64, start: u64, count: u64) {
        self.unnumbered_first = first;
        self.next_index = start;
        self.numbered = count;
    }

    /// The draws for the next request template's random fields: by the request's place
    /// in the run when the plan keys them so, else from the client's generator.
    #[inline]
    pub fn template_draws(&mut self) -> TemplateDraws<'_> {
        if self.unnumbered_first > 0 {
            self.unnumbered_first -= 1;
            return TemplateDraws::Client(&mut self.rng);
        }
        match self.indexed.as_mut() {
            Some(draws) if self.numbered > 0 => {
                draws.start_request(self.next_index);
                self.next_index += 1;
                self.numbered -= 1;
                TemplateDraws::Indexed(draws)
            }
            _ => TemplateDraws::Client(&mut self.rng),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::LoadShape;

    fn plan(ratio: (u32, u32), shape: LoadShape) -> Plan {
        let mut plan = Plan::example();
        plan.workload.ratio = ratio;
        plan.load.shape = shape;
        plan
    }

    #[test]
    fn waits_follow_every_n_sets() {
        let wait = WaitConfig {
            sets: 2,
            waits: 1,
            num_slaves: (1, 1),
            timeout_ms: (5, 5),
        };
        let cfg = plan(
            (1, 0),
            LoadShape {
                wait: Some(wait),
                ..LoadShape::default()
            },
        );
        let mut ops = OpGenerator::new(&cfg, 0, 1).unwrap();
        let kinds: Vec<&str> = (0..6)
            .map(|_| match ops.next_op() {
                Op::Set { .. } => "S",
                Op::Wait {
                    replicas,
                    timeout_ms,
                } => {
                    assert_eq!((replicas, timeout_ms), (1, 5));
                    "W"
                }
                _ => "?",
            })
            .collect();
        assert_eq!(kinds, ["S", "S", "W", "S", "S", "W"]);
    }

    #[test]
    fn expiry_is_drawn_from_the_range() {
        let cfg = plan(
            (1, 0),
            LoadShape {
                expiry_range: Some((10, 20)),
                ..LoadShape::default()
            },
        );
        let mut ops = OpGenerator::new(&cfg, 0, 1).unwrap();
        for _ in 0..1000 {
            match ops.next_op() {
                Op::Set { expiry_secs, .. } => assert!((10..=20).contains(&expiry_secs)),
                other => panic!("unexpected {other:?}"),
            }
        }
    }

    fn multi_get(n: u32) -> LoadShape {
        LoadShape {
            multi_key_get: n,
            ..LoadShape::default()
        }
    }

    /// The first `n` requests of client 0: 0 for a SET, a multi-get's key count.
    fn multi_get_shape(cfg: &Plan, n: usize) -> Vec<usize> {
        let mut ops = OpGenerator::new(cfg, 0, 1).unwrap();
        (0..n)
            .map(|_| match ops.next_op() {
                Op::Set { .. } => 0,
                Op::MultiGet => ops.multi_keys().len(),
                other => panic!("unexpected {other:?}"),
            })
            .collect()
    }

    #[test]
    fn multi_get_takes_the_gets_left_in_the_cycle() {
        let cfg = plan((1, 10), multi_get(4));
        let shape = multi_get_shape(&cfg, 8);
        assert_eq!(shape, [0, 4, 4, 2, 0, 4, 4, 2]);
    }

    #[test]
    fn multi_get_of_one_key_is_still_a_multi_get() {
        // memtier sends `MGET k` for --multi-key-get=1; a plain GET would change the
        // command the server counts.
        let cfg = plan((1, 3), multi_get(1));
        let shape = multi_get_shape(&cfg, 8);
        assert_eq!(shape, [0, 1, 1, 1, 0, 1, 1, 1]);
    }

    fn set_keys(plan: &Plan, client: usize, n: usize) -> Vec<u64> {
        let mut ops = OpGenerator::new(plan, client, client_seed(plan, client, 0)).unwrap();
        (0..n)
            .map(|_| match ops.next_op() {
                Op::Set { key_id, .. } => key_id,
                other => panic!("unexpected {other:?}"),
            })
            .collect()
    }

    #[test]
    fn shards_split_sequential_keys_and_draw_random_ones_apart() {
        use crate::plan::Shard;
        use crate::workload::keys::KeyPattern;
        let mut plan = plan((1, 0), LoadShape::default());
        plan.load.clients = 2;
        // S splits the range only under `-n allkeys` (one pass over it), P always.
        plan.load.stop = StopAt::AllKeys;
        for pattern in [KeyPattern::Parallel, KeyPattern::Sequential] {
            plan.workload.keys.set_pattern = pattern;
            let mut seen = Vec::new();
            for index in 0..3 {
                plan.load.shard = Shard { index, count: 3 };
                for client in 0..2 {
                    let (g, n) = plan.client_of_all_shards(client);
                    let share = crate::workload::keys::partition(0, 101, g, n).1;
                    seen.extend(set_keys(&plan, client, share as usize));
                }
            }
            seen.sort_unstable();
            assert_eq!(seen, (0..=100).collect::<Vec<u64>>(), "{pattern:?}");
        }
        plan.workload.keys.set_pattern = KeyPattern::Random;
        let draws: Vec<Vec<u64>> = (0..3)
            .map(|index| {
                plan.load.shard = Shard { index, count: 3 };
                set_keys(&plan, 0, 200)
            })
            .collect();
        assert_ne!(draws[0], draws[1]);
        assert_ne!(draws[1], draws[2]);
        for d in &draws {
            // From the whole range, not the shard's slice.
            assert!(
                d.iter().any(|&k| k < 34) && d.iter().any(|&k| k > 67),
                "{d:?}"
            );
        }
        plan.load.shard = Shard { index: 1, count: 3 };
        assert_eq!(
            set_keys(&plan, 0, 200),
            draws[1],
            "the same shard draws the same keys"
        );
    }

    #[test]
    fn the_plain_shape_draws_what_the_general_path_draws() {
        use crate::workload::keys::KeyPattern;
        use crate::workload::values::DataSize;
        for (get_pattern, sizes) in [
            (KeyPattern::Random, DataSize::Fixed(32)),
            (
                KeyPattern::Gaussian,
                DataSize::Range {
                    min: 10,
                    max: 200,
                    spread_over_keys: false,
                },
            ),
            (
                KeyPattern::Sequential,
                DataSize::List(vec![(1, 4), (100, 1)]),
            ),
        ] {
            let mut cfg = plan((1, 10), LoadShape::default());
            cfg.workload.keys.max = 10_000_000;
            cfg.workload.keys.get_pattern = get_pattern;
            cfg.workload.data_size = sizes.clone();
            let mut plain = OpGenerator::new(&cfg, 0, 7).unwrap();
            let mut general = OpGenerator::new(&cfg, 0, 7).unwrap();
            assert!(plain.plain);
            general.plain = false;
            for _ in 0..5000 {
                assert_eq!(
                    plain.next_op(),
                    general.next_op(),
                    "{get_pattern:?} {sizes:?}"
                );
            }
        }
    }

    #[test]
    fn a_batch_of_plain_ops_is_what_next_op_draws_one_by_one() {
        use crate::workload::keys::KeyPattern;
        use crate::workload::values::DataSize;
        // The default shape (its own loop), other patterns and sizes, and 0:0.
        for (ratio, get_pattern, sizes) in [
            ((1, 10), KeyPattern::Random, DataSize::Fixed(32)),
            ((3, 2), KeyPattern::Random, DataSize::Fixed(7)),
            ((0, 0), KeyPattern::Random, DataSize::Fixed(32)),
            (
                (1, 1),
                KeyPattern::Gaussian,
                DataSize::Range {
                    min: 10,
                    max: 200,
                    spread_over_keys: false,
                },
            ),
            (
                (2, 5),
                KeyPattern::Sequential,
                DataSize::List(vec![(1, 4), (100, 1)]),
            ),
        ] {
            let mut cfg = plan(ratio, LoadShape::default());
            cfg.workload.keys.max = 10_000_000;
            cfg.workload.keys.get_pattern = get_pattern;
            cfg.workload.data_size = sizes.clone();
            let mut batched = OpGenerator::new(&cfg, 0, 7).unwrap();
            let mut single = OpGenerator::new(&cfg, 0, 7).unwrap();
            assert!(batched.is_plain());
            // Chunks of uneven lengths, so that a cycle of the ratio spans chunks.
            for len in [1, 16, 5, 32, 3].into_iter().cycle().take(200) {
                let mut chunk = [PlainOp::Get { key_id: 0 }; 32];
                batched.next_plain_ops(&mut chunk[..len]);
                for op in &chunk[..len] {
                    let want = single.next_op();
                    assert_eq!(op.op(), want, "{ratio:?} {get_pattern:?} {sizes:?}");
                }
            }
        }
    }

    #[test]
    fn multi_get_fills_n_keys() {
        let cfg = plan((0, 1), multi_get(5));
        let mut ops = OpGenerator::new(&cfg, 0, 1).unwrap();
        assert_eq!(ops.next_op(), Op::MultiGet);
        // 0:1 has one GET per cycle, so a multi-key GET takes only that one.
        assert_eq!(ops.multi_keys().len(), 1);
        assert!(ops.multi_keys().iter().all(|k| *k <= 100));
    }

    #[test]
    fn a_probe_plan_sends_only_probes_in_one_row() {
        let mut cfg = plan((1, 10), LoadShape::default());
        cfg.workload.probe = true;
        let mut ops = OpGenerator::new(&cfg, 0, 1).unwrap();
        assert!((0..20).all(|_| ops.next_op() == Op::Probe));
        assert_eq!(cfg.row_names().len(), 1);
        assert!(!cfg.verification_plan().workload.probe);
    }
}
