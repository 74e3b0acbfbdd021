//! The end of a request: its terminal record ([`finalize`]) and the webhook announcing it
//! ([`webhook_for`]). Both are pure; the actor writes them in one transaction.

use chrono::{DateTime, Utc};
use switchboard_storage::{
    AccountRecord, DeliveryRecord, DeliveryStatus, Environment, Modality, RequestRecord,
    RequestState, RunRecord, StepState, TaskState,
};

use super::Ending;
use crate::electronic::summary::result_summary;
use crate::orchestration::outcome::{finish, required_fields};

/// The terminal transition: state, results, completion time. A terminal record stays as it is.
pub(crate) fn finalize(record: &mut RequestRecord, ending: Ending, now: DateTime<Utc>) {
    if record.state.is_terminal() {
        return;
    }
    let primary = ending.primary.as_deref();
    let primary_required = primary.map(required_fields).unwrap_or_default();
    let run = record.run.get_or_insert_with(RunRecord::default);
    // A person who gave up ends the request `FAILURE` with their code, whatever the calls had found.
    let given_up = run
        .task
        .as_ref()
        .is_some_and(|t| t.state == TaskState::Abandoned);
    let primary_succeeded = !given_up
        && run
            .steps
            .first()
            .is_some_and(|s| s.state == StepState::Succeeded);
    let state = match ending.error {
        Some(error) => {
            for step in run
                .steps
                .iter_mut()
                .filter(|s| s.state == StepState::InProgress)
            {
                step.state = StepState::Failed;
                step.error = Some(error.clone());
            }
            // A fault during the follow-up leg fails the leg, not the request: the primary's answers stand.
            if primary_succeeded {
                finish(run, &primary_required)
            } else {
                run.error = Some(error);
                run.results.clear();
                run.result_sources.clear();
                run.missing_fields = primary_required;
                run.modality.get_or_insert(Modality::PhoneOnly);
                RequestState::Failure
            }
        }
        None => match finish(run, &primary_required) {
            RequestState::Failure if person_answered(run) => {
                answered_by_person(run, &primary_required)
            }
            state => state,
        },
    };
    let answered = matches!(state, RequestState::Success | RequestState::Partial);
    if answered && run.modality == Some(Modality::DigitalOnly) {
        if let Some(schema) = primary {
            run.result_summary = Some(result_summary(
                &schema.definition,
                &run.results,
                run.electronic.as_ref(),
            ));
        }
    }
    record.state = state;
    record.completed_at = Some(now);
}

/// The webhook of a terminal request (service-interface 6.1, 6.3): the request's frozen URL, else the
/// account's; signed with the account's webhook secret, else the API key that created the request, for
/// production; with the sandbox API key for sandbox. `None` when there is nowhere to send it, or no
/// account left to sign it.
pub(crate) fn webhook_for(
    record: &RequestRecord,
    account: Option<&AccountRecord>,
    now: DateTime<Utc>,
) -> Option<DeliveryRecord> {
    let account = account?;
    let url = record
        .webhook_url
        .clone()
        .or_else(|| account.webhook_url.clone())?;
    let api_key = account
        .credentials
        .iter()
        .find(|c| Some(&c.id) == record.credential_id.as_ref())
        .or_else(|| {
            account
                .credentials
                .iter()
                .find(|c| c.environment == record.environment)
        })
        .map(|c| c.key.clone());
    let secret = match record.environment {
        Environment::Production => account.webhook_secret.clone().or(api_key),
        Environment::Sandbox => api_key,
    };
    let Some(signing_secret) = secret else {
        tracing::warn!("no signing secret for the webhook; not sent");
        return None;
    };
    Some(DeliveryRecord {
        request_id: record.id.clone(),
        url,
        signing_secret,
        payload: crate::webhooks::payload(record),
        terminal_at: now,
        next_round: 0,
        next_at: now,
        status: DeliveryStatus::Pending,
        attempts: 0,
        redelivery_at: None,
        redeliveries: 0,
        traceparent: record.trace.as_ref().map(crate::telemetry::traceparent),
    })
}

/// Whether a person completed the request's task with at least one answer.
fn person_answered(run: &RunRecord) -> bool {
    let Some(seq) = run.task.as_ref().and_then(|t| t.call_seq) else {
        return false;
    };
    run.calls
        .iter()
        .find(|c| c.seq == seq)
        .and_then(|c| c.outcome.as_ref())
        .is_some_and(|o| !o.captured.is_empty())
}

/// The ending of a request a person completed without every required field of the primary step: the
/// answers merged as the calls' are, and `PARTIAL` with what is still missing (operator contract 10:
/// `SUCCESS` when every required field is answered, else `PARTIAL`).
fn answered_by_person(run: &mut RunRecord, primary_required: &[String]) -> RequestState {
    let states: Vec<StepState> = run.steps.iter().map(|s| s.state).collect();
    for step in &mut run.steps {
        step.state = StepState::Succeeded;
    }
    finish(run, primary_required);
    for (step, state) in run.steps.iter_mut().zip(states) {
        step.state = state;
    }
    let mut missing: Vec<String> = primary_required
        .iter()
        .filter(|f| !run.results.contains_key(*f))
        .cloned()
        .collect();
    for leg in run.steps.iter().skip(1) {
        missing.extend(leg.missing_fields.iter().cloned());
    }
    run.error = None;
    run.missing_fields = missing;
    if run.missing_fields.is_empty() {
        RequestState::Success
    } else {
        RequestState::Partial
    }
}
