//! One client's request stream: which operation comes next, on which key, with what value size.

use rand::SeedableRng;
use rand::rngs::SmallRng;

use crate::config::Config;
use crate::workload::keys::KeyGenerator;
use crate::workload::sequence::{OpKind, RatioSequence};
use crate::workload::values::ValueSizer;

/// The seed every client shares unless `--distinct-client-seed` or `--randomize` is given:
/// like memtier, the same flags send the same keys.
const DEFAULT_SEED: u64 = 0x6b76_6265_6e63_6821;

/// The next request a client is to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NextOp {
    pub kind: OpKind,
    pub key_id: u64,
    /// Value length for a SET; 0 for a GET.
    pub value_size: usize,
}

/// Generates one client's operations: SET:GET sequence, key patterns and value sizes.
pub struct OpGenerator {
    sequence: RatioSequence,
    set_keys: KeyGenerator,
    get_keys: KeyGenerator,
    sizes: ValueSizer,
    rng: SmallRng,
}

/// The seed for client `client_index` (over all threads) of a run.
pub fn client_seed(config: &Config, client_index: usize, run_seed: u64) -> u64 {
    let base = if config.randomize {
        run_seed
    } else {
        DEFAULT_SEED
    };
    if config.distinct_client_seed {
        base.wrapping_add(client_index as u64 + 1)
    } else {
        base
    }
}

impl OpGenerator {
    /// A generator for client `client_index` of `config.total_clients()`.
    pub fn new(config: &Config, client_index: usize, seed: u64) -> Result<OpGenerator, String> {
        let total = config.total_clients();
        let set_keys =
            KeyGenerator::new(config.keys.set_pattern, &config.keys, client_index, total)
                .map_err(|e| format!("set key pattern: {e}"))?;
        let get_keys =
            KeyGenerator::new(config.keys.get_pattern, &config.keys, client_index, total)
                .map_err(|e| format!("get key pattern: {e}"))?;
        Ok(OpGenerator {
            sequence: RatioSequence::new(config.ratio.0, config.ratio.1),
            set_keys,
            get_keys,
            sizes: ValueSizer::new(&config.data_size, &config.keys),
            rng: SmallRng::seed_from_u64(seed),
        })
    }

    /// The next operation to send.
    #[inline]
    pub fn next_op(&mut self) -> NextOp {
        match self.sequence.next() {
            OpKind::Set => {
                let key_id = self.set_keys.next(&mut self.rng);
                let value_size = self.sizes.next(key_id, &mut self.rng);
                NextOp {
                    kind: OpKind::Set,
                    key_id,
                    value_size,
                }
            }
            OpKind::Get => NextOp {
                kind: OpKind::Get,
                key_id: self.get_keys.next(&mut self.rng),
                value_size: 0,
            },
        }
    }

    /// The generator's random source, shared with value selection so one seed fixes a run.
    pub fn rng(&mut self) -> &mut SmallRng {
        &mut self.rng
    }
}
