//! The engine: runs a validated plan against the servers and returns what it measured.
//! It knows no front end and no report; front ends watch it through a [`RunObserver`].
//!
//! ```text
//! run(plan, observer)
//!   runner   spawns one worker thread per -t, gathers their seconds (gather), stops
//!   worker   one mio::Poll driving its clients; per-second stats to the runner
//!            (tally: what it records into the current second);
//!            slots: its clients and the timers they asked for; busy_poll: polling
//!            without waiting before it sleeps (--busy-poll)
//!   client   what to send next, where, recording replies, redirects, reconnects
//!   connection / transport / tls   one socket: phases, buffers, TCP / Unix / rustls
//!   cluster  slot map, CLUSTER SLOTS discovery, MOVED/ASK; resolver: names off the loop
//!   schedule open-loop intended send times; timer: a timerfd in the poll (TLS
//!            handshake deadlines, open-loop send times)
//!   clock    one clock reading as an Instant and nanoseconds, handed along a visit
//!   generator  one client's request stream; verify: the verification pass's keys
//!   budget   a request count shared by every client; progress: live totals between
//!            seconds; query: one-shot questions to a server (CONFIG GET);
//!            deadline_stream: one deadline for such an exchange (and discovery's)
//! ```

pub mod budget;
pub mod busy_poll;
pub mod client;
pub mod clock;
pub mod cluster;
pub mod connection;
pub mod deadline_stream;
pub mod error_log;
pub mod error_reply;
pub mod failure;
pub mod gather;
pub mod generator;
pub mod in_flight;
pub mod in_flight_queue;
pub mod observer;
pub mod prefetch;
pub mod progress;
pub mod query;
pub mod raw_socket;
pub mod resolver;
pub mod runner;
pub mod schedule;
pub mod setup;
pub mod slots;
pub mod tally;
pub mod timer;
pub mod tls;
pub mod transport;
pub mod verify;
pub mod worker;

pub use observer::{Fanout, Quiet, RunEnd, RunObserver, RunStart, Second, StopSwitch};
pub use progress::Progress;
pub use runner::{Outcome, Prepared, prepare, run, run_prepared};
