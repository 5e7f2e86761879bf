//! Every reply's times handed to the front end as they happen, for tools that show each
//! request (a latency probe) rather than per-second summaries.

use std::time::Instant;

/// One answered request's times, on the monotonic clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    /// When the request should have gone out: its open-loop position, else when it did.
    pub intended: Instant,
    /// When it was written to the socket.
    pub sent: Instant,
    /// When its reply was read.
    pub received: Instant,
}

impl Sample {
    /// Response time: from the intended send time to the reply, microseconds.
    pub fn response_us(&self) -> u64 {
        self.received
            .saturating_duration_since(self.intended)
            .as_micros() as u64
    }

    /// Service time: from the actual send to the reply, microseconds.
    pub fn service_us(&self) -> u64 {
        self.received
            .saturating_duration_since(self.sent)
            .as_micros() as u64
    }
}

/// Where the engine sends every [`Sample`] ([`crate::plan::Outputs::samples`]). The worker
/// never blocks on it: a full bounded channel drops the sample, so give an unbounded one
/// (or one the receiver keeps up with) when every sample matters.
pub type SampleSink = crossbeam_channel::Sender<Sample>;

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn response_counts_from_the_intended_time_service_from_the_send() {
        let intended = Instant::now();
        let sample = Sample {
            intended,
            sent: intended + Duration::from_micros(300),
            received: intended + Duration::from_micros(450),
        };
        assert_eq!((sample.response_us(), sample.service_us()), (450, 150));
        // A clock read out of order is 0, never a wrap.
        let odd = Sample {
            received: intended,
            ..sample
        };
        assert_eq!((odd.response_us(), odd.service_us()), (0, 0));
    }
}
