//! The parts of the workload a front end prepares from files and command lists: arbitrary
//! commands (with a MONITOR capture and SCAN iteration) and the data set (imported values,
//! data verification).

use std::sync::Arc;

use crate::workload::commands::{CommandList, MonitorInput, MonitorPattern};
use crate::workload::import::ImportedData;
use crate::workload::keys::KeyConfig;
use crate::workload::verify::Verifier;

/// An arbitrary-command workload: it replaces SET/GET.
#[derive(Debug)]
pub struct Arbitrary {
    pub list: CommandList,
    /// The MONITOR capture `__monitor_line…__` commands replay.
    pub monitor: Option<Arc<MonitorInput>>,
    pub monitor_pattern: MonitorPattern,
    /// With SCAN cursor iteration: the most continuations per cycle (0: until cursor 0).
    pub scan_max_iterations: Option<u32>,
}

/// The data a run writes and the check made afterwards.
#[derive(Clone, Debug, Default)]
pub struct DataSet {
    /// Imported items; key ids then index them (see [`DataSet::item_index`]).
    pub import: Option<Arc<ImportedData>>,
    /// Ignore the imported expiry times.
    pub no_expiry: bool,
    /// How values are checked after the runs, if they are.
    pub verifier: Option<Arc<Verifier>>,
    /// No benchmark, only the check.
    pub verify_only: bool,
}

impl DataSet {
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
}
