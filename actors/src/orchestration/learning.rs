//! What a finished request's calls teach about its payer's line (operator contract §11): the request's
//! payer in the directory, the zone its hours of the week are read in, and the [`PayerLearning`] the
//! request's terminal write adds to the payer's statistics. Only production requests to a payer of the
//! directory teach anything (a sandbox call never dials; a name the directory does not know is the
//! client's text, kept nowhere).

use chrono::Timelike;
use chrono_tz::Tz;
use switchboard_storage::{
    CallOutcomeRecord, Disposition, Environment, FailureCode, LearnedCall, PayerLearning,
    PayerRecord, RequestRecord, RequestState, Store,
};

use crate::calendar::local_date;

/// The request's payer in the directory: the directory's match, else the payer as the client named it
/// (a request dialing its own number keeps no match, but its payer is still the directory's when the
/// name is).
pub(crate) async fn payer_of(store: &Store, record: &RequestRecord) -> Option<PayerRecord> {
    let name = record
        .payer_lookup
        .as_ref()
        .and_then(|l| l.matched_payer_name.as_deref())
        .or_else(|| record.inputs.get("payerName").map(|n| n.trim()))?;
    store.payer(name).await.ok().flatten()
}

/// The zone of a payer's calling hours and of its week: its own, else the account's.
pub(crate) fn payer_zone(payer: Option<&PayerRecord>, account_zone: Tz) -> Tz {
    payer
        .and_then(|payer| payer.timezone.as_deref()?.parse::<Tz>().ok())
        .unwrap_or(account_zone)
}

/// Whether a representative answered the call: anything but voicemail, a hold timeout or a phone tree
/// that never let the caller through.
fn reached(outcome: &CallOutcomeRecord) -> bool {
    match outcome.disposition {
        Disposition::Completed | Disposition::Referred => true,
        Disposition::Voicemail | Disposition::HoldTimeout => false,
        Disposition::Failed => !outcome
            .failure
            .as_ref()
            .is_some_and(|f| f.code == FailureCode::IvrFailure),
    }
}

/// What `terminal` (a request's final record) teaches about `payer`, read in `zone`; `None` for a
/// sandbox request or one that placed no call.
pub(crate) fn learning_of(
    terminal: &RequestRecord,
    payer: &PayerRecord,
    zone: Tz,
) -> Option<PayerLearning> {
    if terminal.environment != Environment::Production {
        return None;
    }
    let calls: Vec<LearnedCall> = terminal
        .run
        .as_ref()?
        .calls
        .iter()
        .filter_map(|call| {
            let outcome = call.outcome.as_ref()?;
            let local = call.placed_at.with_timezone(&zone);
            Some(LearnedCall {
                day: local.date_naive(),
                hour: local.hour() as u8,
                reached: reached(outcome),
                phases: outcome.phases,
                billed_minutes: outcome.duration_seconds.div_ceil(60),
            })
        })
        .collect();
    if calls.is_empty() {
        return None;
    }
    let completed = matches!(
        terminal.state,
        RequestState::Success | RequestState::Partial
    );
    Some(PayerLearning {
        payer: payer.name.clone(),
        calls,
        completed_on: terminal
            .completed_at
            .filter(|_| completed)
            .map(|at| local_date(at, zone)),
    })
}
