//! A workload of one request template: every request is the template with its random
//! and slot-tag fields filled in (see [`RequestTemplate`]).

use std::sync::Arc;

use crate::stats::RowName;
use crate::workload::request_template::RequestTemplate;

/// Requests made from one template; they replace SET/GET when present.
#[derive(Clone, Debug)]
pub struct Templated {
    /// The request; its random fields take numbers below `random_below`.
    pub template: RequestTemplate,
    /// Each random field gets a uniform number below this (0: always 0).
    pub random_below: u64,
    /// Cluster mode: for every slot, the 3 bytes that, put between the braces of a
    /// `{tag}` field, hash the key to that slot.
    pub slot_tags: Option<Arc<[[u8; 3]]>>,
    /// The one row the requests are reported in.
    pub row: RowName,
}
