//! The step and call actors against a fake parent: each reports through the `Recipient`s it was given,
//! handing over what it has not written for the parent's next write; and the orchestrator's due-work
//! announcements. A temporary sled store and tiny test dialers stand in for the rest of the server.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use chrono::{DateTime, NaiveDate, Utc};
use futures::future::BoxFuture;
use switchboard_storage::{
    CallRecord, DialTarget, Disposition, Environment, FieldRecord, FieldType, NumberSource,
    RequestBatchId, RequestId, RequestRecord, RequestState, RunRecord, SchemaDefinition,
    SchemaVersionRecord, StepRecord, StepState, Store, TestEngine,
};
use tokio::sync::mpsc;

use super::call::CallActor;
use super::edges::Edges;
use super::messages::GetStats;
use super::messages::{CallCrashed, CallEnded, CallParent, StepCrashed, StepEnded, StepParent};
use super::orchestrator::{Orchestrator, Waves};
use super::outcome::required_fields;
use super::step::{StepActor, StepJob};
use super::{Orchestration, ProductionDialer, ProductionDialers, Shared};
use crate::dialer::{CallJob, CallReport, Dialer};
use crate::electronic::NoElectronicChannel;
use crate::{Clock, Metrics};

/// A report as the fake parent received it.
#[derive(Debug, PartialEq)]
enum Report {
    StepEnded { key: String, edges: Edges },
    StepCrashed { key: String, reason: String },
    CallEnded { call_id: String, captured: usize },
    CallCrashed { call_id: String, reason: String },
}

/// Stands in for the parent of a step or a call: hands every report to the test.
struct FakeParent {
    reports: mpsc::UnboundedSender<Report>,
}

impl Actor for FakeParent {
    type Context = Context<Self>;
}

impl Handler<StepEnded> for FakeParent {
    type Result = ();
    fn handle(&mut self, ended: StepEnded, _: &mut Context<Self>) {
        let _ = self.reports.send(Report::StepEnded {
            key: ended.key.to_string(),
            edges: ended.edges,
        });
    }
}

impl Handler<StepCrashed> for FakeParent {
    type Result = ();
    fn handle(&mut self, crashed: StepCrashed, _: &mut Context<Self>) {
        let (key, reason) = (crashed.key, crashed.reason);
        let _ = self.reports.send(Report::StepCrashed {
            key: key.to_string(),
            reason,
        });
    }
}

impl Handler<CallEnded> for FakeParent {
    type Result = ();
    fn handle(&mut self, ended: CallEnded, _: &mut Context<Self>) {
        let _ = self.reports.send(Report::CallEnded {
            call_id: ended.call_id.to_string(),
            captured: ended.outcome.report.captured.len(),
        });
    }
}

impl Handler<CallCrashed> for FakeParent {
    type Result = ();
    fn handle(&mut self, crashed: CallCrashed, _: &mut Context<Self>) {
        let (call_id, reason) = (crashed.call_id, crashed.reason);
        let _ = self.reports.send(Report::CallCrashed {
            call_id: call_id.to_string(),
            reason,
        });
    }
}

fn fake_parent() -> (Addr<FakeParent>, mpsc::UnboundedReceiver<Report>) {
    let (reports, received) = mpsc::unbounded_channel();
    (FakeParent { reports }.start(), received)
}

async fn next_report(received: &mut mpsc::UnboundedReceiver<Report>) -> Report {
    tokio::time::timeout(Duration::from_secs(10), received.recv())
        .await
        .expect("a report within 10 s")
        .expect("the parent is alive")
}

/// Answers every required field of the call's schema on the first call.
struct AnsweringDialer;

impl Dialer for AnsweringDialer {
    fn place(&self, job: CallJob) -> BoxFuture<'static, CallReport> {
        let captured = required_fields(&job.schema)
            .into_iter()
            .map(|field| (field, "yes".to_owned()))
            .collect();
        Box::pin(futures::future::ready(CallReport {
            duration_seconds: 90,
            captured,
            ..CallReport::new(Disposition::Completed)
        }))
    }
}

/// [`AnsweringDialer`], keeping the id of every call it was asked to place.
#[derive(Default)]
struct TallyingDialer {
    placed: std::sync::Mutex<Vec<String>>,
}

impl Dialer for TallyingDialer {
    fn place(&self, job: CallJob) -> BoxFuture<'static, CallReport> {
        self.placed.lock().unwrap().push(job.call_id.to_string());
        AnsweringDialer.place(job)
    }
}

/// Never ends a call: every request it dials stays running.
struct SilentDialer;

impl Dialer for SilentDialer {
    fn place(&self, _: CallJob) -> BoxFuture<'static, CallReport> {
        Box::pin(futures::future::pending())
    }
}

/// Panics inside the call, as foreign dialer code might.
struct PanickingDialer;

impl Dialer for PanickingDialer {
    fn place(&self, _: CallJob) -> BoxFuture<'static, CallReport> {
        Box::pin(async { panic!("the test dialer broke") })
    }
}

fn now() -> DateTime<Utc> {
    "2026-11-23T15:00:00Z".parse().unwrap()
}

fn shared(store: &Store, dialer: Arc<dyn Dialer>) -> Shared {
    Arc::new(orchestration(store, dialer))
}

/// [`shared`] with dispatch running: an orchestrator over it starts what is due.
fn dispatching(store: &Store, dialer: Arc<dyn Dialer>) -> Shared {
    Arc::new(Orchestration {
        dispatch_paused: false,
        ..orchestration(store, dialer)
    })
}

/// What the actors under test share: a manual clock at [`now`], dispatch paused.
fn orchestration(store: &Store, dialer: Arc<dyn Dialer>) -> Orchestration {
    Orchestration {
        store: store.clone(),
        clock: Clock::manual(now()),
        sandbox: Arc::clone(&dialer),
        production: ProductionDialers::single(
            "simulated",
            ProductionDialer {
                dialer,
                real_calls: false,
            },
        ),
        sandbox_electronic: Arc::new(NoElectronicChannel),
        production_electronic: Arc::new(NoElectronicChannel),
        seed: 7,
        time_scale: 0.0,
        dispatch_paused: true,
        metrics: Arc::new(Metrics::new(store)),
        limits: None,
        prices: crate::cost::Prices::FREE,
        learned: Default::default(),
    }
}

fn schema() -> Arc<SchemaVersionRecord> {
    let field = |name: &str| FieldRecord {
        name: name.into(),
        label: name.into(),
        description: String::new(),
        field_type: FieldType::Alphanumeric,
        allowed_values: None,
        required: true,
        when: None,
    };
    Arc::new(SchemaVersionRecord {
        id: "vob".into(),
        version: 1,
        published_at: now(),
        definition: SchemaDefinition {
            name: None,
            request_type: "vob".into(),
            required_inputs: vec![],
            optional_inputs: vec![],
            follow_up: None,
            fields: vec![field("a"), field("b")],
            electronic: Default::default(),
        },
    })
}

/// The batch the test request is created in.
fn batch_id() -> RequestBatchId {
    RequestBatchId::from("01900000-0000-7000-8000-000000000000")
}

/// The test request: the only member of its batch.
fn request_id() -> RequestId {
    batch_id().member(1)
}

/// Stores a running production request whose primary step is open, with `calls` placed.
async fn store_request(store: &Store, calls: Vec<CallRecord>) {
    store
        .commit_requests(std::sync::Arc::new(vec![request_record()]))
        .await
        .unwrap();
    let step = StepRecord {
        key: "step-1".into(),
        schema_id: "vob".into(),
        schema_version: 1,
        name: "vob".into(),
        state: StepState::InProgress,
        triggered_by: None,
        fields_required: 2,
        fields_captured: 0,
        missing_fields: vec!["a".into(), "b".into()],
        error: None,
    };
    store
        .commit_update(&request_id(), move |r| {
            r.run = Some(RunRecord {
                started_at: Some(now()),
                schema_version: 1,
                steps: vec![step.clone()],
                calls: calls.clone(),
                ..RunRecord::default()
            })
        })
        .await
        .unwrap();
}

/// The test request as created: production, booked for today, due now, dialing an input number.
pub(crate) fn request_record() -> RequestRecord {
    let day: NaiveDate = "2026-11-23".parse().unwrap();
    RequestRecord {
        id: request_id(),
        account_id: "acme".into(),
        environment: Environment::Production,
        batch_id: batch_id(),
        schema_id: "vob".into(),
        schema_version: 1,
        request_type: "vob".into(),
        inputs: BTreeMap::new(),
        internal_id: None,
        internal_tag: None,
        webhook_url: None,
        ai_only: false,
        onshore_only: false,
        payer_lookup: None,
        dial: Some(DialTarget {
            number: "8005550123".into(),
            source: NumberSource::Input,
        }),
        credential_id: None,
        payer_electronic: false,
        electronic_payer_id: None,
        state: RequestState::Processing,
        created_at: now(),
        due_date: day,
        due_at: now(),
        completed_at: None,
        run: None,
        trace: None,
    }
}

fn step_job() -> StepJob {
    StepJob {
        request_id: request_id(),
        key: "step-1".into(),
        index: 0,
        schema: schema(),
        asks: vec!["a".into(), "b".into()],
        restarts: 0,
        zone: chrono_tz::America::New_York,
        dialer: None,
        learned_windows: false,
        incarnation: 1,
        edges: Edges::default(),
        trace: None,
    }
}

async fn stored_run(store: &Store) -> RunRecord {
    store
        .request(&request_id())
        .await
        .unwrap()
        .unwrap()
        .run
        .unwrap()
}

/// A stored request with no call yet, and a fake parent for the steps started on it.
struct StepScene {
    _dir: tempfile::TempDir,
    store: Store,
    parent: Addr<FakeParent>,
    reports: mpsc::UnboundedReceiver<Report>,
}

impl StepScene {
    async fn new() -> StepScene {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&switchboard_storage::StorageConfig::embedded(dir.path())).unwrap();
        store_request(&store, vec![]).await;
        let (parent, reports) = fake_parent();
        StepScene {
            _dir: dir,
            store,
            parent,
            reports,
        }
    }

    /// Starts a step over `job`, placing its calls through `dialer`.
    fn start(&self, dialer: Arc<dyn Dialer>, job: StepJob) {
        StepActor::new(
            shared(&self.store, dialer),
            StepParent::of(&self.parent),
            job,
        )
        .start();
    }

    async fn next_report(&mut self) -> Report {
        next_report(&mut self.reports).await
    }
}

#[actix::test]
async fn a_step_reports_its_end_with_its_call_outcome_and_close_for_the_next_write() {
    let mut scene = StepScene::new().await;
    scene.start(Arc::new(AnsweringDialer), step_job());

    let Report::StepEnded { key, edges } = scene.next_report().await else {
        panic!("expected the step to report its end");
    };
    assert_eq!(key, "step-1");
    let mut record = scene.store.request(&request_id()).await.unwrap().unwrap();
    let stored = record.run.clone().unwrap();
    assert_eq!(stored.calls.len(), 1, "one call placed: {:?}", stored.calls);
    assert_eq!((stored.calls[0].seq, stored.calls[0].attempt), (1, 1));
    assert_eq!(
        (stored.steps[0].state, &stored.calls[0].outcome),
        (StepState::InProgress, &None),
        "the outcome and the close are left to the request actor's next write"
    );

    edges.apply(&mut record);
    let run = record.run.unwrap();
    let outcome = run.calls[0].outcome.as_ref().expect("the edges carry it");
    assert_eq!(outcome.disposition, Disposition::Completed);
    assert_eq!(run.steps[0].state, StepState::Succeeded);
    assert_eq!(run.steps[0].fields_captured, 2);
    assert!(run.steps[0].missing_fields.is_empty());
}

/// A call's outcome and the step's close ride with the request actor's next write, so a crash can lose
/// them. The step then runs again on the same record: it must run the same call again (which re-attaches
/// a platform's call) and close the same way, placing no second call.
#[actix::test]
async fn a_step_whose_outcome_was_never_written_runs_the_same_call_again() {
    let mut scene = StepScene::new().await;
    let first = Arc::new(TallyingDialer::default());
    scene.start(first.clone(), step_job());
    let Report::StepEnded { edges: lost, .. } = scene.next_report().await else {
        panic!("expected the first step to report its end");
    };

    // The request actor "crashed" before writing `lost`; its restart starts the step again.
    let again = Arc::new(TallyingDialer::default());
    let job = StepJob {
        incarnation: 2,
        ..step_job()
    };
    scene.start(again.clone(), job);
    let Report::StepEnded { key, edges } = scene.next_report().await else {
        panic!("expected the step to end again");
    };
    assert_eq!(key, "step-1");
    assert_eq!(edges, lost, "the same outcome and verdict, taken again");
    let stored = stored_run(&scene.store).await.calls;
    assert_eq!(stored.len(), 1, "no second call record: {stored:?}");
    assert_eq!(
        *first.placed.lock().unwrap(),
        vec![stored[0].id.to_string()]
    );
    assert_eq!(
        *again.placed.lock().unwrap(),
        vec![stored[0].id.to_string()],
        "the same call, run again"
    );
}

#[actix::test]
async fn a_step_whose_call_panics_reports_the_crash_and_leaves_the_call_to_be_placed_again() {
    let mut scene = StepScene::new().await;
    scene.start(Arc::new(PanickingDialer), step_job());

    let Report::StepCrashed { key, reason } = scene.next_report().await else {
        panic!("expected the step to report a crash");
    };
    assert_eq!(key, "step-1");
    assert!(reason.contains("the test dialer broke"), "{reason}");
    let run = stored_run(&scene.store).await;
    assert_eq!(run.steps[0].state, StepState::InProgress);
    assert_eq!(run.calls.len(), 1);
    assert_eq!(
        run.calls[0].outcome, None,
        "in flight: a restart places it again"
    );
}

#[actix::test]
async fn a_call_reports_its_outcome_to_its_parent_and_leaves_the_write_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&switchboard_storage::StorageConfig::embedded(dir.path())).unwrap();
    let call = CallRecord {
        id: "call-1".into(),
        seq: 1,
        step_key: "step-1".into(),
        attempt: 1,
        to: "8005550123".into(),
        number_source: NumberSource::Input,
        placed_at: now(),
        outcome: None,
        platform: None,
    };
    store_request(&store, vec![call]).await;
    let (parent, mut reports) = fake_parent();
    let job = CallJob {
        call_id: "call-1".into(),
        request_id: request_id(),
        seq: 1,
        attempt: 1,
        step_key: "step-1".into(),
        step_index: 0,
        schema: schema(),
        inputs: BTreeMap::new(),
        number: "8005550123".into(),
        placed_at: now(),
        payer_zone: chrono_tz::Tz::UTC,
        payer_notes: String::new(),
        restarts: 0,
        seed: 7,
        time_scale: 0.0,
        ai_only: false,
        onshore_only: false,
        known: BTreeMap::new(),
    };
    let dialer: Arc<dyn Dialer> = Arc::new(AnsweringDialer);
    let shared = shared(&store, Arc::clone(&dialer));
    CallActor::new(
        shared,
        CallParent::of(&parent),
        job,
        None,
        dialer,
        crate::cost::Prices::FREE,
        None,
    )
    .start();

    let call_id = "call-1".to_owned();
    assert_eq!(
        next_report(&mut reports).await,
        Report::CallEnded {
            call_id,
            captured: 2
        }
    );
    assert_eq!(
        stored_run(&store).await.calls[0].outcome,
        None,
        "the step writes it"
    );
    // The call reports once, then stops.
    assert!(reports.try_recv().is_err());
}

/// Waits up to 10 s for `holds` to answer true, or fails naming `what` never happened.
async fn eventually<F, Fut>(what: &str, mut holds: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !holds().await {
        assert!(std::time::Instant::now() < deadline, "{what}");
        actix::clock::sleep(Duration::from_millis(1)).await;
    }
}

/// Waits until `flag` reads `value`.
async fn flag_reads(flag: &AtomicBool, value: bool) {
    eventually(&format!("the flag never read {value}"), || async {
        flag.load(Ordering::Acquire) == value
    })
    .await;
}

/// `count` requests of one new batch, due [`now`], stored.
async fn stored_batch(store: &Store, count: usize) -> Vec<RequestRecord> {
    let batch = RequestBatchId::new();
    let members: Vec<RequestRecord> = (1..=count)
        .map(|place| RequestRecord {
            id: batch.member(place),
            batch_id: batch.clone(),
            ..request_record()
        })
        .collect();
    store
        .commit_requests(Arc::new(members.clone()))
        .await
        .unwrap();
    members
}

#[actix::test]
async fn due_work_is_announced_once_until_a_dispatch_reads_the_index_and_again_after() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&switchboard_storage::StorageConfig::embedded(dir.path())).unwrap();
    let (_orchestrator, due_work) = Orchestrator::start(shared(&store, Arc::new(PanickingDialer)));
    let announced = Arc::clone(&due_work.announced);
    due_work.announce();
    assert!(announced.load(Ordering::Acquire));
    // The dispatch the first announcement queued covers the second one, and clears the flag.
    due_work.announce();
    flag_reads(&announced, false).await;
    // Announced after that dispatch read the index: a new dispatch is woken for it.
    due_work.announce();
    assert!(announced.load(Ordering::Acquire));
    flag_reads(&announced, false).await;
}

async fn a_due_batch_whose_members_all_left_the_due_state_is_retired_at_the_next_dispatch(
    engine: TestEngine,
) {
    let dir = tempfile::tempdir().unwrap();
    let store = engine.open(dir.path()).unwrap();
    let members = stored_batch(&store, 3).await;
    // One started, two ended without a run: none waits, so none is started again.
    store
        .commit_update(&members[0].id, |r| r.run = Some(RunRecord::default()))
        .await
        .unwrap();
    for member in &members[1..] {
        store
            .commit_update(&member.id, |r| r.state = RequestState::Failure)
            .await
            .unwrap();
    }
    assert_eq!(store.due_by(now()).await.unwrap().len(), 3);
    let (_orchestrator, due_work) =
        Orchestrator::start(dispatching(&store, Arc::new(PanickingDialer)));
    due_work.announce();
    eventually("the batch never retired", || async {
        store.due_by(now()).await.unwrap().is_empty()
    })
    .await;
    assert_eq!(
        store.request(&members[1].id).await.unwrap().unwrap().state,
        RequestState::Failure
    );
}

async fn due_runs_start_in_waves(engine: TestEngine) {
    let dir = tempfile::tempdir().unwrap();
    let store = engine.open(dir.path()).unwrap();
    stored_batch(&store, 5).await;
    let started = |orchestrator: Addr<Orchestrator>| async move {
        orchestrator.send(GetStats).await.unwrap().requests_started
    };
    // Waves an hour apart: the sweep finds the next wave queued and leaves it, so only the first starts.
    let hourly = Waves {
        size: 2,
        interval: Duration::from_secs(3600),
    };
    let (orchestrator, due_work) =
        Orchestrator::start_in_waves(dispatching(&store, Arc::new(SilentDialer)), hourly);
    due_work.announce();
    eventually("no wave started", || async {
        started(orchestrator.clone()).await >= 2
    })
    .await;
    actix::clock::sleep(Duration::from_millis(1_200)).await;
    assert_eq!(started(orchestrator.clone()).await, 2);
    assert_eq!(
        store.due_by(now()).await.unwrap().len(),
        5,
        "a batch seen in part stays due"
    );
    drop((orchestrator, due_work));

    // Waves 10 ms apart: the three not started yet follow, two and then one (the first two are running).
    let quick = Waves {
        size: 2,
        interval: Duration::from_millis(10),
    };
    let (orchestrator, due_work) =
        Orchestrator::start_in_waves(dispatching(&store, Arc::new(SilentDialer)), quick);
    due_work.announce();
    eventually("the later waves never started", || async {
        started(orchestrator.clone()).await >= 3
    })
    .await;
    actix::clock::sleep(Duration::from_millis(50)).await;
    assert_eq!(started(orchestrator).await, 3, "no run starts twice");
}

/// A pass reads the due requests' standings 64 at a time: on PostgreSQL the orchestrator waits for each
/// burst without holding its thread, and goes on where it stopped. A wave of 150 ends inside the third
/// burst, one of 128 at the end of the second; either ends the pass with the next wave queued an hour
/// later, so the sweeps that follow start nothing. A pass that stopped after one burst would leave no
/// wave queued, and the sweep would start the rest.
async fn a_pass_longer_than_a_burst_starts_a_whole_wave(engine: TestEngine) {
    for size in [150, 128] {
        let dir = tempfile::tempdir().unwrap();
        let store = engine.open(dir.path()).unwrap();
        stored_batch(&store, 200).await;
        let hourly = Waves {
            size,
            interval: Duration::from_secs(3600),
        };
        let (orchestrator, due_work) =
            Orchestrator::start_in_waves(dispatching(&store, Arc::new(SilentDialer)), hourly);
        due_work.announce();
        let started = || async { orchestrator.send(GetStats).await.unwrap().requests_started };
        eventually("the wave never started", || async {
            started().await >= size as u64
        })
        .await;
        actix::clock::sleep(Duration::from_millis(1_200)).await;
        assert_eq!(started().await, size as u64, "the next wave waits its hour");
        assert_eq!(
            store.due_by(now()).await.unwrap().len(),
            200,
            "a batch seen in part stays due"
        );
    }
}

/// The dispatch tests on both engines: on sled every burst is ready at once, on PostgreSQL each waits.
macro_rules! on_both_engines {
    ($($test:ident),* $(,)?) => {$(
        mod $test {
            use super::*;

            #[actix::test]
            async fn sled() {
                super::$test(TestEngine::Sled).await
            }

            #[actix::test]
            async fn postgres() {
                super::$test(TestEngine::Postgres).await
            }
        }
    )*};
}

on_both_engines!(
    a_due_batch_whose_members_all_left_the_due_state_is_retired_at_the_next_dispatch,
    due_runs_start_in_waves,
    a_pass_longer_than_a_burst_starts_a_whole_wave,
);
