//! The writes of the request's edges. Each is applied inside a store update that may run it again, and
//! after a restart the same edge may be taken again: applying a write twice changes nothing more.

use chrono::{DateTime, Utc};
use switchboard_storage::{ElectronicRecord, RequestRecord, RunRecord, StepRecord};

/// The write of [`Move::StartRun`](super::Move::StartRun): a run begins once.
pub(crate) fn start_run(record: &mut RequestRecord, schema_version: u32, now: DateTime<Utc>) {
    if record.run.is_none() {
        record.run = Some(RunRecord {
            started_at: Some(now),
            schema_version,
            ..RunRecord::default()
        });
    }
}

/// The write of the electronic channel's answer: the first answer stands.
pub(crate) fn record_electronic(record: &mut RequestRecord, electronic: &ElectronicRecord) {
    if let Some(run) = record.run.as_mut() {
        run.electronic.get_or_insert_with(|| electronic.clone());
    }
}

/// The write of [`Move::OpenStep`](super::Move::OpenStep): the step at `index` is opened once.
pub(crate) fn open_step(record: &mut RequestRecord, step: &StepRecord, index: usize) {
    if let Some(run) = record.run.as_mut() {
        if run.steps.len() == index {
            run.steps.push(step.clone());
        }
    }
}
