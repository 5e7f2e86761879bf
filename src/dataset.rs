//! Where SET values come from and whether they are checked afterwards: `--data-import`,
//! `--generate-keys`, `--no-expiry`, `--data-verify`, `--verify-only`.

use std::path::Path;
use std::sync::Arc;

use crate::cli::Cli;
use crate::config::{DataSize, KeyConfig, Protocol};
use crate::error::{Error, Result};
use crate::workload::import::ImportedData;
use crate::workload::verify::Verifier;

/// The data a run writes and the check made afterwards.
#[derive(Clone, Debug, Default)]
pub struct DataSet {
    /// Imported items; key ids then index them (see [`DataSet::item_index`]).
    pub import: Option<Arc<ImportedData>>,
    /// `--no-expiry`: ignore the imported expiry times.
    pub no_expiry: bool,
    /// How values are checked after the run (`--data-verify`), if they are.
    pub verifier: Option<Arc<Verifier>>,
    /// `--verify-only`: no benchmark, only the check.
    pub verify_only: bool,
}

impl DataSet {
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
            if cli.data_size.is_some()
                || cli.data_size_range.is_some()
                || cli.data_size_list.is_some()
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
                && (cli.key_prefix.is_some()
                    || cli.key_minimum.is_some()
                    || cli.key_maximum.is_some())
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
                None => Verifier::generated(data_size, keys, cli.random_data).map_err(usage)?,
            };
            set.verifier = Some(Arc::new(verifier));
        }
        Ok(set)
    }

    /// The imported item a key id stands for, if values are imported.
    #[inline]
    pub fn item_index(&self, key_id: u64, keys: &KeyConfig) -> Option<usize> {
        self.import.as_ref().map(|data| {
            let index = if data.generated_keys() {
                key_id - keys.min
            } else {
                key_id
            };
            index as usize % data.len()
        })
    }

    /// Largest value a SET can send, when values are imported.
    pub fn max_value_len(&self) -> Option<usize> {
        self.import.as_ref().map(|d| d.max_value_len())
    }
}
