//! The sandbox's electronic channel: the `digital` scenario fills every field the schema maps to an
//! electronic answer, `digital_plus_phone` part of them, other scenarios nothing. Like a real answer, it
//! never fills a field only a call can answer (a representative's name, a call reference number).
//!
//! A `digital` answer closes the request: no call follows, and the request ends `digital_only` at data
//! completeness `minimum`, without the fields only a call could give. A `digital_plus_phone` answer leaves
//! the rest to one call. A schema that maps nothing gets nothing, so both run as `success` there. Whether
//! the payer is electronic is not consulted: the sandbox scenario decides, and sandbox keys never reach a
//! real clearinghouse.

use futures::future::BoxFuture;

use super::{ElectronicAnswer, ElectronicChannel, ElectronicJob};
use crate::dialer::sandbox::capture::electronic_fields;
use crate::dialer::sandbox::dice::Dice;
use crate::dialer::sandbox::Scenario;

/// The sandbox generator's electronic channel.
#[derive(Clone, Copy, Debug, Default)]
pub struct SandboxElectronic;

impl ElectronicChannel for SandboxElectronic {
    fn name(&self) -> &'static str {
        "sandbox"
    }

    fn inquire(&self, job: ElectronicJob) -> BoxFuture<'static, ElectronicAnswer> {
        let dice = Dice::new(job.seed, &job.inputs, 0, 1);
        let schema = &job.schema.definition;
        let captured = match Scenario::from_inputs(&job.inputs) {
            Scenario::Digital => electronic_fields(schema, &dice, &job.inputs, true),
            Scenario::DigitalPlusPhone => electronic_fields(schema, &dice, &job.inputs, false),
            _ => Default::default(),
        };
        let answer = match captured.is_empty() {
            true => ElectronicAnswer::nothing("the sandbox scenario has no electronic answer"),
            false => ElectronicAnswer {
                sources: captured
                    .keys()
                    .map(|f| (f.clone(), "sandbox scenario".to_owned()))
                    .collect(),
                transaction_id: Some(format!("sandbox-{}", job.request_id)),
                captured,
                outcome: "answered".to_owned(),
                // Sandbox keys never reach a clearinghouse.
                transactions: 0,
            },
        };
        Box::pin(futures::future::ready(answer))
    }

    /// A `digital` answer closes the request: it ends `digital_only` at data completeness `minimum`.
    fn closes_request(&self, job: &ElectronicJob) -> bool {
        Scenario::from_inputs(&job.inputs) == Scenario::Digital
    }
}
