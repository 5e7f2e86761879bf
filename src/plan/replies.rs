//! What an error reply (`-ERR ...`) from the server does to a run.

/// What an error reply to a request of the workload does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ErrorReplies {
    /// Counted in its row's errors (the first ones are shown, rate-limited); the run
    /// goes on.
    #[default]
    Count,
    /// Ends the run at once: its text is the run's `error_reply`, so a benchmark of a
    /// command the server refuses is not reported as a fast one. An error reply that
    /// answers no request (a server refusing a new connection, such as "max number of
    /// clients reached") ends it the same way.
    Stop,
}
