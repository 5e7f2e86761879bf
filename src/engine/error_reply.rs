//! The error reply that stopped a run (`ErrorReplies::Stop`): the first one any client
//! meets is kept, with the server that sent it, for the run's outcome, so a front end
//! can word it its own way (redis-benchmark's `Error from server: ...`).

use std::sync::OnceLock;

/// The first error reply of a run, set once by whichever client meets it first.
#[derive(Debug, Default)]
pub struct FirstErrorReply(OnceLock<(String, String)>);

impl FirstErrorReply {
    /// Keeps `text` from `server` unless an earlier reply was kept already.
    pub fn keep(&self, server: &str, text: &[u8]) {
        let _ = self.0.set((
            server.to_string(),
            String::from_utf8_lossy(text).into_owned(),
        ));
    }

    /// `(server, text)` of the reply kept, if any.
    pub fn get(&self) -> Option<&(String, String)> {
        self.0.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_reply_wins() {
        let first = FirstErrorReply::default();
        assert!(first.get().is_none());
        first.keep("a:1", b"ERR one");
        first.keep("b:2", b"ERR two");
        assert_eq!(
            first.get(),
            Some(&("a:1".to_string(), "ERR one".to_string()))
        );
    }
}
