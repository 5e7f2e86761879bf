//! A front end's own request stream: each client asks its stream for the next command
//! (arguments built into a reusable buffer), instead of SET/GET, arbitrary commands or a
//! template. For workloads whose commands carry state from one to the next (a load that
//! walks each client's key range once, a batch of queries kept in one hash slot).
//!
//! A stream also says where its batches end; with [`BatchWrap::MultiExec`] the engine
//! sends each batch as one transaction:
//!
//! ```text
//! MULTI, cmd 1 .. cmd k (each answered +QUEUED), EXEC     k <= pipeline
//! each cmd recorded once, when EXEC's reply comes: latency from its own (intended) send
//! time, outcome and element count from its entry in EXEC's reply; MULTI and EXEC are
//! counted in no row
//! ```

use std::fmt::Debug;
use std::sync::Arc;

use crate::stats::RowName;
use crate::workload::args::Args;

/// Makes each client's stream. Shared by every worker thread.
pub trait StreamFactory: Send + Sync + Debug {
    /// The stream of client `index` (over all threads) of `clients`.
    fn client(&self, index: usize, clients: usize) -> Box<dyn RequestStream>;

    /// Commands client `index` of `clients` will send in all: what a total rate is
    /// shared out by, so workers whose clients have more to send get more of it. Asked
    /// of every client at set-up; a factory that knows its split without building the
    /// stream says so.
    fn commands(&self, index: usize, clients: usize) -> u64 {
        self.client(index, clients).remaining()
    }
}

/// One client's commands, in order.
pub trait RequestStream: Send {
    /// Writes the next command into `cmd` (cleared first by the stream); `None` when the
    /// stream has no more. Called on the hot path: write into `cmd`, allocate nothing
    /// once warmed up.
    fn next(&mut self, cmd: &mut Args) -> Option<Step>;

    /// Commands this stream will still produce (the client's share of the run).
    fn remaining(&self) -> u64;
}

/// What the engine learns about a command with it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Step {
    /// The command is the last of its batch: with [`BatchWrap::MultiExec`], EXEC follows
    /// it. A batch also ends after `pipeline` commands.
    pub ends_batch: bool,
}

/// How the batches of a stream go out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BatchWrap {
    /// Commands are pipelined as they come, up to the pipeline's depth in flight.
    #[default]
    Plain,
    /// Each batch is a transaction: `MULTI`, its commands, `EXEC`. A client starts its
    /// next batch once EXEC is answered. A batch must stay in one hash slot in a
    /// cluster: a redirection inside it (MOVED or ASK at queue time) aborts the
    /// transaction, and each of its commands counts as an error (not resent).
    MultiExec,
}

/// A workload of front-end streams: they replace SET/GET (and arbitrary commands and
/// templates) when present.
#[derive(Clone, Debug)]
pub struct Streamed {
    pub factory: Arc<dyn StreamFactory>,
    pub wrap: BatchWrap,
    /// The one row the commands are reported in.
    pub row: RowName,
}
