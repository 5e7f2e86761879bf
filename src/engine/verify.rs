//! The verification pass: the keys to read back, handed out to every client of every
//! thread, and what each read found.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::protocol::ReplyKind;
use crate::workload::verify::{Verifier, VerifyReport};

/// The keys to read back, shared by all clients, and the report they fill.
pub struct VerifyJob {
    pub verifier: Arc<Verifier>,
    /// The key indices to check (see [`Verifier::indices`]).
    pub indices: Vec<u64>,
    next: AtomicUsize,
    report: Mutex<VerifyReport>,
}

impl VerifyJob {
    /// A pass over `indices`, judged by `verifier`.
    pub fn new(verifier: Arc<Verifier>, indices: Vec<u64>) -> Self {
        VerifyJob {
            verifier,
            indices,
            next: AtomicUsize::new(0),
            report: Mutex::new(VerifyReport::new()),
        }
    }

    /// The next key index to read, until every one was handed out.
    pub fn take(&self) -> Option<u64> {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        self.indices.get(i).copied()
    }

    /// Records what a read of key `index` found: its reply's kind and payload.
    pub fn check(&self, index: u64, kind: ReplyKind, text: &[u8]) {
        let mut key = Vec::new();
        self.verifier.write_key(index, &mut key);
        let mut report = self.report.lock().unwrap_or_else(|e| e.into_inner());
        match kind {
            ReplyKind::Error => report.record_error(&key, &String::from_utf8_lossy(text)),
            ReplyKind::Nil => {
                let outcome = self.verifier.check(&key, None);
                report.record(&key, outcome);
            }
            _ => {
                let outcome = self.verifier.check(&key, Some(text));
                report.record(&key, outcome);
            }
        }
    }

    /// The counts so far.
    pub fn report(&self) -> VerifyReport {
        self.report
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}
