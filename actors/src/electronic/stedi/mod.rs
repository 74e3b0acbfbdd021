//! The Stedi adapter (`[electronic] kind = "stedi"`): benefits requests send an eligibility check (X12
//! 270/271 as JSON, `POST {base_url}/change/medicalnetwork/eligibility/v3`), claim-status requests a
//! claim status check (276/277, `POST {base_url}/change/medicalnetwork/claimstatus/v2`).
//!
//! `bodies.rs` holds the request and response shapes as Stedi's OpenAPI names them, `inquiry.rs` builds
//! and checks an inquiry from the inputs, `client.rs` sends it (auth, bounded retries, timeout) and
//! `mapping.rs` turns the answer into schema fields by the schema's declared mapping (claim-status answers in
//! `claims.rs`, values in the field's type in `values.rs`). This file routes: only
//! payers marked electronic with a clearinghouse payer id, only schemas with a mapping, only inquiries the
//! clearinghouse would accept; anything else is an answer that fills nothing.

pub mod bodies;
mod claims;
pub mod client;
pub mod inquiry;
pub mod mapping;
mod values;

use std::sync::Arc;

use futures::future::BoxFuture;

use super::{ElectronicAnswer, ElectronicChannel, ElectronicJob};
use bodies::{ClaimStatusResponse, EligibilityResponse};
pub use client::{RetryPolicy, StediClient, StediError};
use inquiry::{build, transaction_for, Inquiry, InvalidInquiry};
use mapping::{map_claim_status, map_eligibility};

/// Path of the eligibility check.
pub const ELIGIBILITY_PATH: &str = "/change/medicalnetwork/eligibility/v3";
/// Path of the claim status check.
pub const CLAIM_STATUS_PATH: &str = "/change/medicalnetwork/claimstatus/v2";

/// The electronic channel through Stedi.
#[derive(Clone, Debug)]
pub struct StediChannel {
    client: Arc<StediClient>,
}

impl StediChannel {
    /// The channel over `client`.
    pub fn new(client: StediClient) -> StediChannel {
        StediChannel {
            client: Arc::new(client),
        }
    }
}

impl ElectronicChannel for StediChannel {
    fn name(&self) -> &'static str {
        "stedi"
    }

    fn inquire(&self, job: ElectronicJob) -> BoxFuture<'static, ElectronicAnswer> {
        let schema = Arc::clone(&job.schema);
        let definition = &schema.definition;
        let ready = |outcome: &str| -> BoxFuture<'static, ElectronicAnswer> {
            Box::pin(futures::future::ready(ElectronicAnswer::nothing(outcome)))
        };
        if !job.payer_electronic {
            return ready("payer not reachable electronically");
        }
        let Some(payer_id) = job.electronic_payer_id.as_deref() else {
            return ready("payer has no clearinghouse payer id");
        };
        let Some(transaction) = transaction_for(definition) else {
            return ready("no field of the schema is mapped to a clearinghouse answer");
        };
        let built = build(
            transaction,
            definition,
            &job.inputs,
            payer_id,
            job.provider_name.as_deref(),
            job.today,
        );
        let inquiry = match built {
            Ok(inquiry) => inquiry,
            Err(InvalidInquiry(paths)) => {
                tracing::info!(properties = ?paths, "inputs the clearinghouse would reject; no inquiry");
                return ready(&format!("not sent: invalid {}", paths.join(", ")));
            }
        };
        let client = Arc::clone(&self.client);
        let claim_number = job.inputs.get("claimNumber").cloned();
        Box::pin(async move {
            let definition = &schema.definition;
            let answered = match &inquiry {
                Inquiry::Eligibility(request) => client
                    .post::<EligibilityResponse>(ELIGIBILITY_PATH, request)
                    .await
                    .map(|response| {
                        let id = response
                            .id
                            .clone()
                            .or_else(|| {
                                response
                                    .meta
                                    .as_ref()
                                    .and_then(|m| m.outbound_trace_id.clone())
                            })
                            .or_else(|| response.control_number.clone());
                        (id, map_eligibility(definition, &response))
                    }),
                Inquiry::ClaimStatus(request) => client
                    .post::<ClaimStatusResponse>(CLAIM_STATUS_PATH, request)
                    .await
                    .map(|response| {
                        let id = response
                            .meta
                            .as_ref()
                            .and_then(|m| m.trace_id.clone())
                            .or_else(|| response.control_number.clone());
                        (
                            id,
                            map_claim_status(definition, &response, claim_number.as_deref()),
                        )
                    }),
            };
            // The outcome text can quote the payer's or Stedi's words about the patient: the log gets its
            // kind only.
            let (answer, outcome_kind) = match answered {
                Ok((transaction_id, Ok(mapped))) => (
                    ElectronicAnswer {
                        outcome: match mapped.captured.is_empty() {
                            true => "answered; no mapped element present".to_owned(),
                            false => "answered".to_owned(),
                        },
                        captured: mapped.captured,
                        sources: mapped.sources,
                        transaction_id,
                        transactions: 1,
                    },
                    "answered",
                ),
                Ok((transaction_id, Err(rejection))) => (
                    ElectronicAnswer {
                        transaction_id,
                        transactions: 1,
                        ..ElectronicAnswer::nothing(rejection)
                    },
                    "rejected by the payer",
                ),
                Err(error) => (ElectronicAnswer::nothing(error.to_string()), error.kind()),
            };
            tracing::info!(
                fields = answer.captured.len(),
                outcome = outcome_kind,
                "clearinghouse inquiry finished"
            );
            answer
        })
    }
}
