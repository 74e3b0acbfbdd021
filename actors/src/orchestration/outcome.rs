//! Pure decisions of orchestration, kept apart from the actix glue so they can be tested with plain
//! `#[test]`: what a step does after a call, how a phone-number failure is attributed, and how the calls
//! of a run merge into the request's final state.

use std::collections::BTreeMap;

use switchboard_storage::{
    CallRecord, Disposition, Environment, FailureCategory, FailureCode, FailureRecord, Modality,
    NumberSource, RequestState, RunRecord, SchemaVersionRecord, StepRecord, StepState,
};

/// Calls a step may place before it gives up (the first call and two redials).
pub const MAX_ATTEMPTS_PER_STEP: u32 = 3;

/// What a step does next.
#[derive(Clone, Debug, PartialEq)]
pub enum StepDecision {
    /// Place a call to `number` (ten digits), whose origin is `source`.
    Dial {
        /// Number to dial.
        number: String,
        /// Its origin, for failure attribution.
        source: NumberSource,
    },
    /// The step captured every required field.
    Succeed,
    /// The step is over without its fields.
    Fail(FailureRecord),
}

/// The required field names of a schema version.
pub fn required_fields(schema: &SchemaVersionRecord) -> Vec<String> {
    schema
        .definition
        .fields
        .iter()
        .filter(|f| f.required)
        .map(|f| f.name.clone())
        .collect()
}

/// Decides a step's next move from its finished calls (in order). `first_number` is the request's dial
/// target; `environment` decides how a wrong-number failure is attributed (see [`attribute`]).
pub fn next_step_move(
    calls: &[&CallRecord],
    required: &[String],
    first_number: Option<(&str, NumberSource)>,
    environment: Environment,
) -> StepDecision {
    let Some(last) = calls.last() else {
        return match first_number {
            Some((number, source)) => StepDecision::Dial {
                number: number.to_owned(),
                source,
            },
            None => StepDecision::Fail(internal_failure("The request has no phone number to dial")),
        };
    };
    let outcome = last
        .outcome
        .as_ref()
        .expect("only finished calls are evaluated");
    let captured: BTreeMap<&str, &str> = calls
        .iter()
        .filter_map(|c| c.outcome.as_ref())
        .flat_map(|o| o.captured.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .collect();
    let complete = required
        .iter()
        .all(|field| captured.contains_key(field.as_str()));
    let budget_left = calls.len() < MAX_ATTEMPTS_PER_STEP as usize;
    let redial = |number: &str, source: NumberSource| StepDecision::Dial {
        number: number.to_owned(),
        source,
    };
    match outcome.disposition {
        Disposition::Completed if complete => StepDecision::Succeed,
        Disposition::Completed if budget_left => redial(&last.to, last.number_source),
        Disposition::Completed => StepDecision::Fail(internal_failure(
            "The representative could not provide every required field within the retry budget",
        )),
        Disposition::Voicemail | Disposition::HoldTimeout if budget_left => {
            redial(&last.to, last.number_source)
        }
        Disposition::Referred if budget_left => match &outcome.referral_number {
            Some(number) => redial(number, NumberSource::Referral),
            None => redial(&last.to, last.number_source),
        },
        Disposition::Voicemail | Disposition::HoldTimeout | Disposition::Referred => {
            StepDecision::Fail(failure(
                FailureCategory::SystemError,
                FailureCode::UnableToReachHumanInTime,
                "No representative was reached within the retry budget",
            ))
        }
        Disposition::Failed => StepDecision::Fail(attribute(
            outcome
                .failure
                .clone()
                .unwrap_or_else(|| internal_failure("The call failed")),
            last.number_source,
            environment,
        )),
    }
}

/// Applies the dialing-number attribution table (7.3) to a generic wrong-number failure.
///
/// A dialer cannot know where the number it dialed came from, so production calls report the generic
/// `PHONE_NUMBER_INCORRECT` and the step, which recorded the source, replaces it with the specific code.
/// Sandbox calls are scripted instead: `failure:PHONE_NUMBER_INCORRECT` asks for the generic code itself,
/// as clients meet it on calls whose source was not recorded, so there the code stays and only its
/// category follows the source (`SYSTEM_ERROR` when Switchboard looked the number up, else `NOT_FOUND`).
pub fn attribute(
    failure_record: FailureRecord,
    source: NumberSource,
    environment: Environment,
) -> FailureRecord {
    if failure_record.code != FailureCode::PhoneNumberIncorrect {
        return failure_record;
    }
    if environment == Environment::Sandbox {
        let category = match source {
            NumberSource::Directory => FailureCategory::SystemError,
            NumberSource::Referral | NumberSource::Input | NumberSource::PhoneBook => {
                FailureCategory::NotFound
            }
        };
        return FailureRecord {
            category,
            ..failure_record
        };
    }
    let (category, code) = match source {
        NumberSource::Directory => (
            FailureCategory::SystemError,
            FailureCode::MatchedPhoneNumberIncorrect,
        ),
        NumberSource::Referral => (
            FailureCategory::NotFound,
            FailureCode::RepresentativePhoneNumberIncorrect,
        ),
        NumberSource::Input | NumberSource::PhoneBook => (
            FailureCategory::NotFound,
            FailureCode::InputPhoneNumberIncorrect,
        ),
    };
    FailureRecord {
        category,
        code,
        message: failure_record.message,
    }
}

/// A failure inside Switchboard (`SYSTEM_ERROR` / `OTHER`), the category and code of every fault that is
/// no call's doing.
pub fn internal_failure(message: &str) -> FailureRecord {
    failure(FailureCategory::SystemError, FailureCode::Other, message)
}

/// A failure record.
pub fn failure(
    category: impl Into<FailureCategory>,
    code: impl Into<FailureCode>,
    message: &str,
) -> FailureRecord {
    FailureRecord::new(category.into(), code.into(), message)
}

/// The step's counters after its calls.
pub fn close_step(
    step: &mut StepRecord,
    calls: &[&CallRecord],
    required: &[String],
    state: StepState,
    error: Option<FailureRecord>,
) {
    let captured: Vec<&String> = calls
        .iter()
        .filter_map(|c| c.outcome.as_ref())
        .flat_map(|o| o.captured.keys())
        .collect();
    step.fields_required = required.len() as u32;
    step.fields_captured = required.iter().filter(|f| captured.contains(f)).count() as u32;
    step.missing_fields = required
        .iter()
        .filter(|f| !captured.contains(f))
        .cloned()
        .collect();
    step.state = state;
    step.error = error;
}

/// The request's terminal state from its run: results merged call by call (a later call's value wins and
/// becomes the field's source), top-level missing fields, error and modality.
pub fn finish(run: &mut RunRecord, primary_required: &[String]) -> RequestState {
    let mut results = BTreeMap::new();
    let mut sources = BTreeMap::new();
    if let Some(electronic) = &run.electronic {
        results.extend(electronic.captured.clone());
    }
    let electronic_fields: Vec<String> = run
        .electronic
        .iter()
        .flat_map(|e| e.captured.keys().cloned())
        .collect();
    for call in &run.calls {
        if let Some(outcome) = &call.outcome {
            // What the electronic channel answered stays its answer: the call was placed for the rest.
            for (field, value) in outcome
                .captured
                .iter()
                .filter(|(f, _)| !electronic_fields.contains(f))
            {
                results.insert(field.clone(), value.clone());
                sources.insert(field.clone(), call.seq);
            }
        }
    }
    let primary = run.steps.first();
    let follow_up = run.steps.get(1);
    let placed_calls = !run.calls.is_empty();
    let electronic_filled = run
        .electronic
        .as_ref()
        .is_some_and(|e| !e.captured.is_empty());
    run.modality = Some(match (electronic_filled, placed_calls) {
        (true, false) => Modality::DigitalOnly,
        (true, true) => Modality::DigitalPlusPhone,
        (false, _) => Modality::PhoneOnly,
    });
    let primary_ok = match primary {
        Some(step) => step.state == StepState::Succeeded,
        // No step: the electronic channel alone filled every required field, or answered and closed the
        // request with what it had (data completeness `minimum`).
        None => {
            (electronic_filled && run.electronic.as_ref().is_some_and(|e| e.closes_request))
                || primary_required.iter().all(|f| results.contains_key(f))
        }
    };
    if !primary_ok {
        run.error = Some(
            primary
                .and_then(|s| s.error.clone())
                .unwrap_or_else(|| internal_failure("The request could not be completed")),
        );
        run.missing_fields = primary_required.to_vec();
        run.results = BTreeMap::new();
        run.result_sources = BTreeMap::new();
        return RequestState::Failure;
    }
    run.results = results;
    run.result_sources = sources;
    match follow_up {
        Some(leg) if leg.state == StepState::Failed => {
            run.missing_fields = leg.missing_fields.clone();
            RequestState::Partial
        }
        _ => {
            run.missing_fields = Vec::new();
            RequestState::Success
        }
    }
}

#[cfg(test)]
#[path = "outcome_tests.rs"]
mod tests;
