//! One request, from its due day to a terminal state: the rules here, the actix glue in [`actor`].
//!
//! The stored record is the request's state. [`Phase::of`] reads where a request stands, and [`decide`]
//! takes the one edge out of that phase, as a [`Move`]; each edge is a function of its own below. Both are
//! pure (the record, the account, the schemas and the time in; a move out), so every edge is tested with
//! plain `#[test]`, without an actix `System`. So are the writes the edges make (`writes.rs`: taken again
//! after a restart, an edge changes nothing more), the restart intensity (`restarts.rs`) and the terminal
//! record with its webhook (`terminal.rs`).
//!
//! [`actor::RequestActor`] reads the record and the account once per advance, decides, writes the move's
//! change and awaits its flush, and only then starts what the move asks for.

mod actor;
mod fallback;
mod mailbox;
mod restarts;
mod schemas;
mod terminal;
mod writes;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use chrono::{DateTime, Utc};
use switchboard_storage::{
    AccountRecord, ElectronicRecord, FailureRecord, Feature, RequestRecord, RunRecord,
    SchemaVersionRecord, StepKey, StepRecord, StepState,
};

use super::error::OrchestrationError;
use super::outcome::{internal_failure, required_fields};
use super::RESTART_LIMIT;

pub(crate) use actor::RequestActor;
pub(crate) use fallback::task_instead;
pub(crate) use restarts::{after_fault, record_restart, AfterFault};
pub(crate) use terminal::{finalize, webhook_for};
pub(crate) use writes::{open_step, record_electronic, start_run};

use restarts::recent_restarts;

/// Where a request stands, as its record tells it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Phase<'r> {
    /// Terminal: nothing is left to do.
    Ended,
    /// Its day has come and no run is on record.
    Due,
    /// A run is on record.
    Running(&'r RunRecord, Progress),
}

/// How far a running request's steps are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Progress {
    /// No step is open yet (the electronic channel may have answered).
    BeforeSteps,
    /// The last step opened is in progress.
    InStep,
    /// Every step opened is closed.
    StepsClosed,
}

impl Phase<'_> {
    /// The phase of `record`.
    pub(crate) fn of(record: &RequestRecord) -> Phase<'_> {
        if record.state.is_terminal() {
            return Phase::Ended;
        }
        let Some(run) = &record.run else {
            return Phase::Due;
        };
        let progress = match run.steps.last() {
            None => Progress::BeforeSteps,
            Some(step) if step.state == StepState::InProgress => Progress::InStep,
            Some(_) => Progress::StepsClosed,
        };
        Phase::Running(run, progress)
    }
}

/// What a request does next: one variant per kind of edge.
#[derive(Debug)]
pub(crate) enum Move {
    /// Due → Running: write a run pinned to this version of the request's schema.
    StartRun {
        /// The schema's latest version (the version booked at creation when the schema is gone).
        schema_version: u32,
    },
    /// Before steps → before steps, answered: ask the electronic channel. Nothing is written before its
    /// answer, and the answer is written before any step opens.
    TryElectronic {
        /// The run's primary schema version: its fields and their electronic mapping.
        primary: Arc<SchemaVersionRecord>,
    },
    /// Before steps → in step (the primary step) or steps closed → in step (the follow-up leg): write the
    /// step, then run it.
    OpenStep(StepPlan),
    /// In step → in step: run the step on record again (after a restart).
    ResumeStep(StepPlan),
    /// → Ended: write the terminal record, with its webhook.
    Finish(Ending),
    /// Ended → Ended: nothing left to do.
    End,
    /// Steps closed, a task open: a person is working it; nothing to do until they finish or it expires.
    AwaitPerson,
    /// A task (this id) nobody finished in time: it expires, and the request then ends as it would have.
    ExpireTask(String),
}

/// A step to run.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct StepPlan {
    /// The step as opened (or as on record, when resumed).
    pub step: StepRecord,
    /// Its place in the run: 0 for the primary step, 1 for the follow-up leg.
    pub index: usize,
    /// The schema version it runs.
    pub schema: Arc<SchemaVersionRecord>,
    /// The required fields it asks for: the primary step leaves out what the electronic channel filled.
    pub asks: Vec<String>,
}

/// How a request ends.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Ending {
    /// A failure of the request itself (an account gone, repeated faults); `None` when its calls decide.
    pub error: Option<FailureRecord>,
    /// The run's primary schema version, when it is still known: its required fields are what a failure
    /// reports missing, and it words the summary of a digital-only result.
    pub primary: Option<Arc<SchemaVersionRecord>>,
}

/// The schema versions a decision may read: the store (through a cache of the immutable versions) in the
/// actor, a map in tests.
pub(crate) trait SchemaCatalog {
    /// The latest published version of schema `id`, `None` when the schema is unknown.
    async fn latest_version(&mut self, id: &str) -> Result<Option<u32>, OrchestrationError>;

    /// Version `version` of schema `id`; a missing one is [`OrchestrationError::SchemaMissing`].
    async fn version(
        &mut self,
        id: &str,
        version: u32,
    ) -> Result<Arc<SchemaVersionRecord>, OrchestrationError>;
}

/// The next move of `record`, given its account (`None` when deleted), the schemas and the time.
pub(crate) async fn decide(
    record: &RequestRecord,
    account: Option<&AccountRecord>,
    schemas: &mut impl SchemaCatalog,
    now: DateTime<Utc>,
) -> Result<Move, OrchestrationError> {
    match (Phase::of(record), account) {
        (Phase::Ended, _) => Ok(Move::End),
        (_, None) => Ok(Move::Finish(account_gone(record, schemas).await)),
        (Phase::Due, Some(_)) => start(record, schemas).await,
        (Phase::Running(run, progress), Some(account)) => {
            // A request waiting for a person decides nothing else until the task is closed.
            if let Some(task) = &run.task {
                let primary = schemas
                    .version(&record.schema_id, run.schema_version)
                    .await?;
                return Ok(fallback::after_task(task, primary, now));
            }
            // Restarts recorded by the orchestrator for an actor that vanished count like the actor's own.
            if recent_restarts(run, now) > RESTART_LIMIT {
                return Ok(Move::Finish(give_up(record, schemas).await));
            }
            let primary = schemas
                .version(&record.schema_id, run.schema_version)
                .await?;
            match progress {
                Progress::BeforeSteps
                    if run.electronic.is_none() && account.has(Feature::ElectronicChannels) =>
                {
                    Ok(try_electronic(primary))
                }
                Progress::BeforeSteps if electronic_filled(run, &primary) => Ok(finish(primary)),
                Progress::BeforeSteps => Ok(open_primary(run, primary)),
                Progress::InStep => resume_step(run, schemas).await,
                Progress::StepsClosed => {
                    match open_follow_up(run, account, &primary, schemas).await? {
                        Some(leg) => Ok(leg),
                        None => Ok(finish(primary)),
                    }
                }
            }
        }
    }
}

/// Due → Running, pinned to the schema's latest version.
async fn start(
    record: &RequestRecord,
    schemas: &mut impl SchemaCatalog,
) -> Result<Move, OrchestrationError> {
    let latest = schemas.latest_version(&record.schema_id).await?;
    Ok(Move::StartRun {
        schema_version: latest.unwrap_or(record.schema_version),
    })
}

fn try_electronic(primary: Arc<SchemaVersionRecord>) -> Move {
    Move::TryElectronic { primary }
}

/// The electronic channel answered every required field, or answered and closed the request: no call is
/// needed.
fn electronic_filled(run: &RunRecord, primary: &SchemaVersionRecord) -> bool {
    run.electronic.as_ref().is_some_and(|electronic| {
        (electronic.closes_request && !electronic.captured.is_empty())
            || required_fields(primary)
                .iter()
                .all(|f| electronic.captured.contains_key(f))
    })
}

/// Before steps → in step: the primary step, asking for what the electronic channel left open.
fn open_primary(run: &RunRecord, primary: Arc<SchemaVersionRecord>) -> Move {
    let asks = fields_to_ask(&primary, 0, run.electronic.as_ref());
    let mut step = new_step(&primary, 1, None);
    step.fields_required = asks.len() as u32;
    step.missing_fields = asks.clone();
    Move::OpenStep(StepPlan {
        step,
        index: 0,
        schema: primary,
        asks,
    })
}

/// In step → in step: the step in progress runs again; finished calls are kept, an unfinished one is
/// placed again under its record.
async fn resume_step(
    run: &RunRecord,
    schemas: &mut impl SchemaCatalog,
) -> Result<Move, OrchestrationError> {
    let index = run.steps.len() - 1;
    let step = &run.steps[index];
    let schema = schemas
        .version(&step.schema_id, step.schema_version)
        .await?;
    Ok(Move::ResumeStep(StepPlan {
        asks: fields_to_ask(&schema, index, run.electronic.as_ref()),
        step: step.clone(),
        index,
        schema,
    }))
}

/// Steps closed → in step: the follow-up leg, once, when a call of the successful primary step asked for it,
/// the account has follow-up calls and the primary schema names a leg that exists.
async fn open_follow_up(
    run: &RunRecord,
    account: &AccountRecord,
    primary: &SchemaVersionRecord,
    schemas: &mut impl SchemaCatalog,
) -> Result<Option<Move>, OrchestrationError> {
    let first = &run.steps[0];
    let requested = run
        .calls
        .iter()
        .filter(|c| c.step_key == first.key)
        .filter_map(|c| c.outcome.as_ref())
        .any(|o| o.follow_up_requested);
    if first.state != StepState::Succeeded || run.steps.len() != 1 || !requested {
        return Ok(None);
    }
    let Some(leg_id) = primary.definition.follow_up.as_deref() else {
        return Ok(None);
    };
    if !account.has(Feature::FollowUpCalls) {
        return Ok(None);
    }
    let Some(latest) = schemas.latest_version(leg_id).await? else {
        return Ok(None);
    };
    let leg = schemas.version(leg_id, latest).await?;
    Ok(Some(Move::OpenStep(StepPlan {
        step: new_step(&leg, 2, Some(first.key.clone())),
        index: 1,
        asks: fields_to_ask(&leg, 1, None),
        schema: leg,
    })))
}

/// → Ended, as the run's calls (or the electronic answer) decide.
fn finish(primary: Arc<SchemaVersionRecord>) -> Move {
    Move::Finish(Ending {
        error: None,
        primary: Some(primary),
    })
}

/// → Ended in `FAILURE`: the request's actors failed more often than the restart intensity allows.
pub(crate) async fn give_up(record: &RequestRecord, schemas: &mut impl SchemaCatalog) -> Ending {
    fail(
        record,
        schemas,
        "The request failed repeatedly inside Switchboard",
    )
    .await
}

/// → Ended in `FAILURE`: the request's account was deleted.
async fn account_gone(record: &RequestRecord, schemas: &mut impl SchemaCatalog) -> Ending {
    fail(record, schemas, "The account no longer exists").await
}

/// The ending of a request that fails inside Switchboard with `message`.
async fn fail(record: &RequestRecord, schemas: &mut impl SchemaCatalog, message: &str) -> Ending {
    let version = record
        .run
        .as_ref()
        .map_or(record.schema_version, |run| run.schema_version);
    // A request fails even when its schema is gone; then no field is reported missing.
    let primary = schemas.version(&record.schema_id, version).await.ok();
    Ending {
        error: Some(internal_failure(message)),
        primary,
    }
}

/// The required fields of the step at `index` that are still to be asked: the primary step (index 0)
/// leaves out what the electronic channel filled.
fn fields_to_ask(
    schema: &SchemaVersionRecord,
    index: usize,
    electronic: Option<&ElectronicRecord>,
) -> Vec<String> {
    let mut asks = required_fields(schema);
    if let (0, Some(electronic)) = (index, electronic) {
        asks.retain(|f| !electronic.captured.contains_key(f));
    }
    asks
}

fn new_step(
    schema: &SchemaVersionRecord,
    number: usize,
    triggered_by: Option<StepKey>,
) -> StepRecord {
    let required = required_fields(schema);
    StepRecord {
        key: StepKey::numbered(number),
        schema_id: schema.id.clone(),
        schema_version: schema.version,
        name: schema
            .definition
            .name
            .clone()
            .unwrap_or_else(|| schema.id.clone()),
        state: StepState::InProgress,
        triggered_by,
        fields_required: required.len() as u32,
        fields_captured: 0,
        missing_fields: required,
        error: None,
    }
}
