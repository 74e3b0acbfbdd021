//! Electronic channels: what answers a request from a clearinghouse before any call is placed. One trait,
//! four implementations: the sandbox generator (sandbox keys, whatever the configuration), the seeded
//! simulator, Stedi (eligibility 270/271 and claim status 276/277 as JSON) and none, chosen for production
//! keys by `[electronic] kind`.
//!
//! A channel never fails a request. Whatever goes wrong (a rejection, an input the clearinghouse would
//! refuse, a payer that is down, a timeout) is an answer that fills nothing, and the phone takes the whole
//! question set. The request actor records the answer (and its trace) before it opens a step, so a restart
//! in the middle of an inquiry repeats the inquiry, which has no side effect, and never a call.

pub mod sandbox;
pub mod simulated;
pub mod stedi;
pub mod summary;

#[cfg(test)]
mod consistency_tests;
#[cfg(test)]
#[path = "simulated_tests.rs"]
mod simulated_tests;

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::future::BoxFuture;
use switchboard_storage::{ElectronicRecord, RequestId, SchemaVersionRecord};

/// Everything a channel needs to answer one request.
#[derive(Clone, Debug)]
pub struct ElectronicJob {
    /// The request.
    pub request_id: RequestId,
    /// The primary schema version: its fields and their electronic mapping.
    pub schema: Arc<SchemaVersionRecord>,
    /// The request's validated inputs.
    pub inputs: BTreeMap<String, String>,
    /// Whether the matched payer is reachable electronically.
    pub payer_electronic: bool,
    /// The matched payer's clearinghouse id.
    pub electronic_payer_id: Option<String>,
    /// The account's provider organization name, used when the inputs carry no `billingProviderName`.
    pub provider_name: Option<String>,
    /// `simulation.seed`.
    pub seed: u64,
    /// The day the inquiry is made, in the account's zone (from the clock): a search for a claim's
    /// dates of service never reaches past it.
    pub today: chrono::NaiveDate,
}

/// What a channel answered: the fields it fills and the trace of how.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ElectronicAnswer {
    /// Field name to value, in the field's type.
    pub captured: BTreeMap<String, String>,
    /// The clearinghouse's transaction id, when one was issued.
    pub transaction_id: Option<String>,
    /// Field name to the element of the answer behind it.
    pub sources: BTreeMap<String, String>,
    /// How the attempt went, in a few words.
    pub outcome: String,
    /// Clearinghouse inquiries the attempt sent and had answered (each billed as one transaction): 0 when
    /// nothing was sent (a payer or schema the channel cannot ask, inputs it would reject, a sandbox
    /// scenario) or nothing came back (a timeout, errors past the retry bound).
    pub transactions: u32,
}

impl ElectronicAnswer {
    /// An answer that fills nothing, for the reason given.
    pub fn nothing(outcome: impl Into<String>) -> ElectronicAnswer {
        ElectronicAnswer {
            outcome: outcome.into(),
            ..ElectronicAnswer::default()
        }
    }

    /// The stored record of this answer from `channel`, stamped with the time it arrived and priced at
    /// `prices` (the request's: free for sandbox).
    pub fn into_record(
        self,
        channel: &str,
        at: chrono::DateTime<chrono::Utc>,
        prices: crate::cost::Prices,
    ) -> ElectronicRecord {
        ElectronicRecord {
            cost_cents: Some(prices.inquiry_cents(self.transactions)),
            at,
            captured: self.captured,
            channel: Some(channel.to_owned()),
            transaction_id: self.transaction_id,
            sources: self.sources,
            outcome: Some(self.outcome),
            closes_request: false,
        }
    }
}

/// Answers requests electronically. Implementations must never block the thread (the returned future
/// waits) and must resolve within a bounded time: the phone path waits for them.
pub trait ElectronicChannel: Send + Sync {
    /// The channel's name in traces (`stedi`, `simulated`, `sandbox`, `none`).
    fn name(&self) -> &'static str;

    /// Tries to answer `job`; an answer that fills nothing is a normal outcome.
    fn inquire(&self, job: ElectronicJob) -> BoxFuture<'static, ElectronicAnswer>;

    /// Whether the answer to `job`, when it fills anything, is the request's whole answer: no call follows,
    /// even for required fields it leaves open (see `ElectronicRecord::closes_request`). A clearinghouse's
    /// answer never is: the phone takes what it leaves open.
    fn closes_request(&self, _job: &ElectronicJob) -> bool {
        false
    }
}

/// `[electronic] kind = "none"`: no clearinghouse; every request goes to the phone.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoElectronicChannel;

impl ElectronicChannel for NoElectronicChannel {
    fn name(&self) -> &'static str {
        "none"
    }

    fn inquire(&self, _: ElectronicJob) -> BoxFuture<'static, ElectronicAnswer> {
        Box::pin(futures::future::ready(ElectronicAnswer::nothing(
            "no electronic channel configured",
        )))
    }
}
