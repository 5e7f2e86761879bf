//! memtier's data-set flags validated: `--data-import`, `--generate-keys`, `--no-expiry`,
//! `--data-verify`, `--verify-only`.

use std::path::Path;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::frontend::memtier::cli::Cli;
use crate::plan::DataSet;
use crate::protocol::Protocol;
use crate::workload::import::ImportedData;
use crate::workload::keys::KeyConfig;
use crate::workload::values::DataSize;
use crate::workload::verify::{MAX_TRACKED_KEYS, Verifier};

/// Validates the flags and loads the import file. With an import, `keys` is narrowed
/// to the items: ids `0..len` (file keys) or `key_min..key_min+len` (`--generate-keys`).
pub fn from_cli(
    cli: &Cli,
    keys: &mut KeyConfig,
    data_size: &DataSize,
    protocol: Protocol,
) -> Result<DataSet> {
    let usage = |m: String| Error::usage(m);
    let mut set = DataSet {
        no_expiry: cli.no_expiry,
        verify_only: cli.verify_only,
        ..DataSet::default()
    };
    if let Some(path) = cli.data_import.as_deref() {
        if cli.data_size.is_some() || cli.data_size_range.is_some() || cli.data_size_list.is_some()
        {
            return Err(usage(
                "--data-import takes value sizes from the file: drop -d, --data-size-range and --data-size-list."
                    .to_string(),
            ));
        }
        if cli.random_data {
            return Err(usage(
                "--data-import takes values from the file: drop -R/--random-data.".to_string(),
            ));
        }
        if !cli.generate_keys
            && (cli.key_prefix.is_some() || cli.key_minimum.is_some() || cli.key_maximum.is_some())
        {
            return Err(usage(
                "--key-prefix, --key-minimum and --key-maximum apply to imported data only with --generate-keys."
                    .to_string(),
            ));
        }
        let data = ImportedData::load(
            Path::new(path),
            cli.generate_keys,
            cli.no_expiry,
            &keys.prefix,
            keys.min,
        )
        .map_err(usage)?;
        if protocol == Protocol::MemcacheText {
            data.check_memcache_text_keys().map_err(usage)?;
        }
        let count = data.len() as u64;
        if cli.generate_keys {
            keys.max = keys.min + count - 1;
        } else {
            keys.min = 0;
            keys.max = count - 1;
        }
        // The Gaussian defaults follow the narrowed range.
        keys.median = (keys.min + keys.max) as f64 / 2.0;
        keys.stddev = (keys.max - keys.min) as f64 / 6.0;
        set.import = Some(Arc::new(data));
    } else if cli.generate_keys || cli.no_expiry {
        return Err(usage(
            "--generate-keys and --no-expiry apply to --data-import.".to_string(),
        ));
    }
    if cli.data_verify || cli.verify_only {
        let verifier = match &set.import {
            Some(data) => Verifier::imported(Arc::clone(data)),
            None if cli.random_data => {
                return Err(usage(
                    "--data-verify cannot check --random-data values: each SET sends a slice \
                     of random bytes at a random offset, so no one value is expected of a key. \
                     Drop -R/--random-data, or verify imported data (--data-import)"
                        .to_string(),
                ));
            }
            None => Verifier::generated(data_size, keys),
        };
        // The run marks every key it writes, one bit each: the range must fit the tracker.
        let count = verifier.index_count();
        if !cli.verify_only && count > MAX_TRACKED_KEYS {
            return Err(usage(format!(
                "--data-verify tracks the keys a run writes with one bit per key, and supports at \
                 most {MAX_TRACKED_KEYS} keys; this key range has {count}. Narrow --key-minimum/--key-maximum"
            )));
        }
        set.verifier = Some(Arc::new(verifier));
    }
    Ok(set)
}
