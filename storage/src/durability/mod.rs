//! Group commit: one flusher thread makes writes durable for many writers at once.
//!
//! Writes come two ways. A writer that wrote on its own asks for a flush that begins after its write.
//! A grouped write ([`crate::group`]) is queued instead: before each flush the thread applies everything
//! queued in one transaction, so the writers waiting on a flush share its transaction as well as its fsync.
//!
//! sled 0.34's own answers both fall short: its periodic background flush acknowledges nothing (a kill -9
//! loses whatever it had not reached), and `flush_async` hangs once several calls are in flight (sled issue
//! 1308). So a dedicated thread loops on the blocking `Db::flush`. A writer, after its write, asks for a flush
//! that *begins after now* and waits for it; every writer that arrives while a flush runs is covered by the
//! next one, so N concurrent writers cost about two fsyncs, not N. Under load the thread also lingers briefly
//! before each flush (see [`LINGER`]), so that next one covers more of them.

mod metrics;

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use prometheus::Histogram;
use tokio::sync::watch;

use crate::group::{GroupTrees, Job};
use crate::StorageError;
use metrics::{flush_histogram, group_size_histogram};

/// Most jobs applied in one transaction: a bound on the transaction's memory and on how long a write
/// that arrives just after a group began waits for the next one (a job costs tens of microseconds).
/// Creating while 10,000 requests run, p99 was 83 to 250 ms at 256 and at 32, 55 to 63 ms at 64; the
/// 10,000-request burst took the same time at 64 as at 256.
const MAX_GROUP: usize = 64;

/// How long the flusher lets a group fill before writing it, once the previous group was shared. On one
/// core the flusher would otherwise wake for the first queued write and flush it nearly alone, while the
/// writers it preempted queue for the next flush: 64 clients creating at once averaged one flush per create.
/// Lingering 2 ms cut that to one flush per six or seven creates and raised creates/s by 15 to 75% in
/// alternating runs (1 ms: about half that gain; 4 ms: no better than 2). A lone writer (previous group of
/// one or none) never waits.
const LINGER: Duration = Duration::from_millis(2);

/// The linger is slept in slices, so a group that fills up early goes at once.
const LINGER_SLICE: Duration = Duration::from_micros(250);

/// How often an idle flusher looks for audit read events that have waited their delay.
const READS_POLL: Duration = Duration::from_millis(100);

/// What the flusher has finished so far, published to waiting writers.
#[derive(Clone, Debug, Default)]
struct Progress {
    /// Highest flush epoch that completed successfully.
    completed: u64,
    /// The latest failed epoch and its error; writers waiting on it (or earlier) are told.
    failed: Option<(u64, String)>,
    closed: bool,
}

#[derive(Default)]
struct Demand {
    /// Epoch of the flush most recently begun.
    started: u64,
    /// Highest epoch any writer is waiting for.
    requested: u64,
    /// Grouped writes a client is waiting for, applied before any of `queued`.
    urgent: VecDeque<Box<dyn Job>>,
    /// Other grouped writes waiting for a flush.
    queued: VecDeque<Box<dyn Job>>,
    shutdown: bool,
}

/// Which queue a grouped write joins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lane {
    /// A client waits on it (a create, a terminal write and its webhook): goes first.
    Client,
    /// Orchestration's own progress and bookkeeping.
    Background,
}

impl Demand {
    fn is_idle(&self) -> bool {
        self.urgent.is_empty() && self.queued.is_empty()
    }

    fn is_full(&self) -> bool {
        self.urgent.len() + self.queued.len() >= MAX_GROUP
    }

    /// Up to [`MAX_GROUP`] jobs, clients' first: with thousands of requests running, a create or a
    /// request's last write would otherwise queue behind every transition in flight.
    fn next_group(&mut self) -> Vec<Box<dyn Job>> {
        let urgent = self.urgent.len().min(MAX_GROUP);
        let mut jobs: Vec<Box<dyn Job>> = self.urgent.drain(..urgent).collect();
        let rest = self.queued.len().min(MAX_GROUP - jobs.len());
        jobs.extend(self.queued.drain(..rest));
        jobs
    }
}

struct Shared {
    demand: Mutex<Demand>,
    wake: Condvar,
    progress: watch::Sender<Progress>,
    /// Running statistics of flush latency, read by metrics.
    stats: Mutex<FlushStats>,
    /// Every flush's duration, for the Prometheus exposition.
    latency: Histogram,
    /// Writes per group transaction, for the Prometheus exposition.
    group_sizes: Histogram,
}

/// Counters describing the flusher's work so far.
#[derive(Clone, Copy, Debug, Default)]
pub struct FlushStats {
    /// Flushes performed.
    pub flushes: u64,
    /// Sum of flush durations.
    pub total: Duration,
    /// Longest single flush.
    pub max: Duration,
}

/// Handle on the flusher thread; dropping the last one stops the thread after a final flush.
pub(crate) struct Flusher {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Flusher {
    pub(crate) fn start(db: crate::engine::Db, trees: GroupTrees) -> Flusher {
        let (progress, _) = watch::channel(Progress::default());
        let shared = Arc::new(Shared {
            demand: Mutex::new(Demand::default()),
            wake: Condvar::new(),
            progress,
            stats: Mutex::new(FlushStats::default()),
            latency: flush_histogram(),
            group_sizes: group_size_histogram(),
        });
        let thread_shared = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("store-flusher".into())
            .spawn(move || run(db, trees, thread_shared))
            .expect("spawn flusher thread");
        Flusher {
            shared,
            thread: Mutex::new(Some(thread)),
        }
    }

    /// Waits until everything written before this call is on disk.
    pub(crate) async fn durable(&self) -> Result<(), StorageError> {
        let target = self.request();
        self.completed(target).await
    }

    /// Waits until every grouped write applied so far is on disk: the flush of the group being written
    /// now, if any, and no later one. Writes made on their own are not covered (see [`Flusher::durable`]).
    pub(crate) async fn groups_durable(&self) -> Result<(), StorageError> {
        let target = self.shared.demand.lock().expect("flusher lock").started;
        self.completed(target).await
    }

    /// Whether the last flush failed, and none succeeded since.
    pub(crate) fn failing(&self) -> bool {
        let progress = self.shared.progress.borrow();
        matches!(&progress.failed, Some((epoch, _)) if *epoch > progress.completed)
    }

    async fn completed(&self, target: u64) -> Result<(), StorageError> {
        let mut progress = self.shared.progress.subscribe();
        let outcome = progress
            .wait_for(|p| {
                p.completed >= target
                    || p.closed
                    || matches!(&p.failed, Some((e, _)) if *e >= target)
            })
            .await
            .map_err(|_| StorageError::Closed)?
            .clone();
        settle(&outcome, target)
    }

    /// Blocking twin of [`Flusher::durable`], for threads outside the async runtime.
    pub(crate) fn durable_blocking(&self) -> Result<(), StorageError> {
        let mut progress = self.shared.progress.subscribe();
        let target = self.request();
        loop {
            let outcome = progress.borrow_and_update().clone();
            if outcome.completed >= target
                || outcome.closed
                || outcome.failed.as_ref().is_some_and(|(e, _)| *e >= target)
            {
                return settle(&outcome, target);
            }
            // watch has no blocking wait; the flusher publishes within one fsync, so a short sleep is cheap.
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Queues a grouped write for the next flush with room for it; the job hears its outcome once that
    /// flush is done.
    pub(crate) fn submit(&self, job: Box<dyn Job>, lane: Lane) {
        let mut demand = self.shared.demand.lock().expect("flusher lock");
        if demand.shutdown {
            drop(demand);
            return job.fail(StorageError::Closed);
        }
        match lane {
            Lane::Client => demand.urgent.push_back(job),
            Lane::Background => demand.queued.push_back(job),
        }
        self.shared.wake.notify_one();
    }

    pub(crate) fn stats(&self) -> FlushStats {
        *self.shared.stats.lock().expect("flush stats lock")
    }

    pub(crate) fn latency(&self) -> Histogram {
        self.shared.latency.clone()
    }

    pub(crate) fn group_sizes(&self) -> Histogram {
        self.shared.group_sizes.clone()
    }

    /// Registers demand for a flush that starts after now and returns its epoch.
    fn request(&self) -> u64 {
        let mut demand = self.shared.demand.lock().expect("flusher lock");
        let target = demand.started + 1;
        demand.requested = demand.requested.max(target);
        self.shared.wake.notify_one();
        target
    }

    /// Flushes what is pending and stops the thread.
    pub(crate) fn shutdown(&self) {
        {
            let mut demand = self.shared.demand.lock().expect("flusher lock");
            demand.shutdown = true;
            demand.requested = demand.requested.max(demand.started + 1);
            self.shared.wake.notify_one();
        }
        if let Some(thread) = self.thread.lock().expect("flusher thread lock").take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Flusher {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn settle(outcome: &Progress, target: u64) -> Result<(), StorageError> {
    if outcome.completed >= target {
        return Ok(());
    }
    match &outcome.failed {
        Some((epoch, error)) if *epoch >= target => Err(StorageError::Flush(error.clone())),
        _ => Err(StorageError::Closed),
    }
}

fn run(db: crate::engine::Db, trees: GroupTrees, shared: Arc<Shared>) {
    let mut shared_group = false;
    loop {
        let (epoch, last, mut jobs) = {
            let mut demand = shared.demand.lock().expect("flusher lock");
            // Read events of the audit log wait for a group; with nothing written, the wait is polled so
            // they are written within their delay all the same.
            while demand.requested <= demand.started
                && demand.is_idle()
                && !demand.shutdown
                && !trees.chain.reads_due()
            {
                demand = shared
                    .wake
                    .wait_timeout(demand, READS_POLL)
                    .expect("flusher lock")
                    .0;
            }
            if shared_group {
                demand = linger(&shared, demand);
            }
            if demand.requested <= demand.started && demand.is_idle() && !trees.chain.has_reads() {
                break;
            }
            // Only read events are due: they are appended now, and reach the disk through the read journal
            // (`audit::journal`) until the next flush. A flush of its own for them, twice a second on an
            // idle store, deadlocked sled 0.34 against transactions of other stores in the process: its
            // flush holds the process-wide lock for reading while it waits for the log.
            if demand.requested <= demand.started && demand.is_idle() && !demand.shutdown {
                drop(demand);
                let _open = trees.gate.read().expect("write gate");
                trees.apply_reads_unflushed();
                continue;
            }
            demand.started += 1;
            let jobs = demand.next_group();
            let last = demand.shutdown && demand.is_idle() && !trees.chain.has_reads();
            (demand.started, last, jobs)
        };
        shared_group = jobs.len() > 1;
        if !jobs.is_empty() {
            shared.group_sizes.observe(jobs.len() as f64);
        }
        // Held while the group is written and flushed: a backup copies between two groups.
        let open = trees.gate.read().expect("write gate");
        if let Err(e) = trees.apply(&mut jobs) {
            tracing::error!(error.message = %e, writes = jobs.len(), "grouped write failed");
            let message = e.to_string();
            for job in jobs.drain(..) {
                job.fail(StorageError::Flush(message.clone()));
            }
        }
        #[cfg(test)]
        drop(trees.before_flush.read().expect("test gate"));
        let flushing = trees.chain.head().clone();
        let began = Instant::now();
        let result = db.flush();
        record(&shared, began.elapsed());
        if result.is_ok() {
            trees.chain.flushed(&flushing, last);
        }
        shared.progress.send_modify(|p| match &result {
            Ok(_) => p.completed = epoch,
            Err(e) => {
                tracing::error!(error.message = %e, "store flush failed");
                p.failed = Some((epoch, e.to_string()));
            }
        });
        drop(open);
        let durable = result.as_ref().map(|_| ()).map_err(|e| e.to_string());
        for job in jobs {
            job.settle(durable.clone().map_err(StorageError::Flush));
        }
        if last {
            break;
        }
    }
    shared.progress.send_modify(|p| p.closed = true);
    // Submitted between the last group and the stop: never written.
    let left = {
        let mut demand = shared.demand.lock().expect("flusher lock");
        let mut left = std::mem::take(&mut demand.urgent);
        left.append(&mut demand.queued);
        left
    };
    for job in left {
        job.fail(StorageError::Closed);
    }
}

/// Lets more writes join the coming group: sleeps up to [`LINGER`] without the lock, until the group is
/// full or the store is shutting down.
fn linger<'a>(shared: &'a Shared, mut demand: MutexGuard<'a, Demand>) -> MutexGuard<'a, Demand> {
    let began = Instant::now();
    while !demand.is_full() && !demand.shutdown && began.elapsed() < LINGER {
        drop(demand);
        std::thread::sleep(LINGER_SLICE);
        demand = shared.demand.lock().expect("flusher lock");
    }
    demand
}

fn record(shared: &Shared, took: Duration) {
    shared.latency.observe(took.as_secs_f64());
    let mut stats = shared.stats.lock().expect("flush stats lock");
    stats.flushes += 1;
    stats.total += took;
    stats.max = stats.max.max(took);
}

#[cfg(test)]
mod tests;
