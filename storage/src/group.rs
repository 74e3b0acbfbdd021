//! Grouped writes: every write queued while the flusher is busy is applied in one sled transaction, and one
//! flush then makes all of them durable.
//!
//! A sled transaction costs far more than the keys it writes: each one seals a log buffer of its own, and
//! those seals are the I/O threads' work. Measured with the ceiling server's create (same body, same
//! six trees, one core): a transaction per POST ran at 4,100 to 5,200 creates/s, one transaction for all
//! the POSTs waiting on a flush at 14,200/s, the same as one plain insert per POST.
//!
//! A queued write is a [`Job`]: a closure over [`Txn`] that may run more than once (sled retries a
//! transaction that met a concurrent writer, from scratch) and that declines only before its first write,
//! so a declined job leaves nothing in the group it shared.

use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};

use sled::transaction::{
    ConflictableTransactionError, TransactionError, UnabortableTransactionError,
};

use crate::engine::TxTree;
use tokio::sync::oneshot;

use std::sync::Arc;

use crate::audit::{self, AuditChain, NewEvent};
use crate::backup::WriteGate;
use crate::requests::SharedBatches;
use crate::seal::Sealer;
use crate::{trees, StorageError};

/// The trees a grouped write may touch, as views inside the group's transaction.
pub(crate) struct Txn {
    pub(crate) requests: TxTree,
    pub(crate) intake: TxTree,
    pub(crate) request_index: TxTree,
    pub(crate) idempotency: TxTree,
    pub(crate) bookings: TxTree,
    pub(crate) due: TxTree,
    pub(crate) active: TxTree,
    pub(crate) deliveries: TxTree,
    pub(crate) delivery_queue: TxTree,
    pub(crate) audit: TxTree,
    pub(crate) tasks: TxTree,
    pub(crate) payer_stats: TxTree,
    /// Audit events of the changes made in this transaction, appended with them.
    events: RefCell<Vec<NewEvent>>,
    /// The batches this transaction's lone creates share, written after every job.
    pub(crate) shared: RefCell<SharedBatches>,
}

impl Txn {
    /// Records `event` with this transaction's writes: it is in the audit log exactly when they are.
    pub(crate) fn record(&self, event: NewEvent) {
        self.events.borrow_mut().push(event);
    }
}

/// The same trees outside any transaction, owned by whoever runs groups.
#[derive(Clone)]
pub(crate) struct GroupTrees {
    pub(crate) requests: crate::engine::Tree,
    pub(crate) intake: crate::engine::Tree,
    pub(crate) request_index: crate::engine::Tree,
    pub(crate) idempotency: crate::engine::Tree,
    pub(crate) bookings: crate::engine::Tree,
    pub(crate) due: crate::engine::Tree,
    pub(crate) active: crate::engine::Tree,
    pub(crate) deliveries: crate::engine::Tree,
    pub(crate) delivery_queue: crate::engine::Tree,
    pub(crate) audit: crate::engine::Tree,
    pub(crate) tasks: crate::engine::Tree,
    /// What is learned of each payer's line, added with each request's end.
    pub(crate) payer_stats: crate::engine::Tree,
    /// The audit log's head and waiting read events.
    pub(crate) chain: Arc<AuditChain>,
    /// Held for reading by every write, for writing by a backup ([`crate::backup`]).
    pub(crate) gate: Arc<WriteGate>,
    /// Seals the batches lone creates share, once the group's jobs have all joined theirs.
    sealer: Arc<Sealer>,
    /// Held for writing by a test to stop the flusher after a group's transaction, before its flush:
    /// the moment a write is readable and not yet durable.
    #[cfg(test)]
    pub(crate) before_flush: Arc<std::sync::RwLock<()>>,
}

/// A write's own verdict inside a transaction: `Ok(Err(_))` declines (nothing written), the outer error is
/// sled's and fails the whole group.
pub(crate) type Verdict<T> = Result<Result<T, StorageError>, UnabortableTransactionError>;

/// What became of a grouped write: its own outcome, and whether the flush after its group succeeded. Kept
/// inside the store: its callers hear of a write once it is durable ([`Committed::into_result`]), as they
/// would from an engine whose commits are durable when they return.
#[derive(Debug)]
pub(crate) struct Committed<T> {
    /// The write's result; `Ok` means it is in the store.
    pub(crate) outcome: Result<T, StorageError>,
    /// The flush that followed; `Ok` means the write is on disk.
    pub(crate) durable: Result<(), StorageError>,
}

impl<T> Committed<T> {
    /// The value once both the write and its flush succeeded.
    pub(crate) fn into_result(self) -> Result<T, StorageError> {
        let value = self.outcome?;
        self.durable?;
        Ok(value)
    }
}

/// A write waiting for its group, type-erased so one queue holds every kind.
pub(crate) trait Job: Send {
    /// Announces the keys the write will read ([`TxTree::want`]), before any job of the group runs, so
    /// an engine that reads over the network reads them all at once.
    fn want(&self, _txn: &Txn) {}
    /// Runs the write inside the group's transaction; each run starts over.
    fn apply(&mut self, txn: &Txn) -> Result<(), UnabortableTransactionError>;
    /// The group failed as a whole: nothing of it was written.
    fn fail(self: Box<Self>, error: StorageError);
    /// The group was written; `durable` is the flush that followed.
    fn settle(self: Box<Self>, durable: Result<(), StorageError>);
}

/// What a write will read, announced ahead: see [`Job::want`].
pub(crate) type Wants = Box<dyn Fn(&Txn) + Send>;

/// A typed write and the caller waiting for it.
pub(crate) struct Queued<T, F> {
    wants: Option<Wants>,
    write: F,
    outcome: Option<Result<T, StorageError>>,
    reply: oneshot::Sender<Committed<T>>,
}

impl<T, F> Queued<T, F>
where
    T: Send + 'static,
    F: FnMut(&Txn) -> Verdict<T> + Send + 'static,
{
    /// A job for `write`, and where its result will arrive.
    pub(crate) fn job(write: F) -> (Box<dyn Job>, oneshot::Receiver<Committed<T>>) {
        Queued::job_reading(None, write)
    }

    /// [`Queued::job`] for a write that announces its reads with `wants`.
    pub(crate) fn job_reading(
        wants: Option<Wants>,
        write: F,
    ) -> (Box<dyn Job>, oneshot::Receiver<Committed<T>>) {
        let (reply, receiver) = oneshot::channel();
        let job = Queued {
            wants,
            write,
            outcome: None,
            reply,
        };
        (Box::new(job), receiver)
    }
}

impl<T, F> Job for Queued<T, F>
where
    T: Send + 'static,
    F: FnMut(&Txn) -> Verdict<T> + Send + 'static,
{
    fn want(&self, txn: &Txn) {
        if let Some(wants) = &self.wants {
            wants(txn);
        }
    }

    fn apply(&mut self, txn: &Txn) -> Result<(), UnabortableTransactionError> {
        self.outcome = Some((self.write)(txn)?);
        Ok(())
    }

    fn fail(self: Box<Self>, error: StorageError) {
        let Queued { write, reply, .. } = *self;
        // What the write holds (an outbox hold) is let go before its caller hears the answer.
        drop(write);
        let _ = reply.send(Committed {
            outcome: Err(error),
            durable: Ok(()),
        });
    }

    fn settle(self: Box<Self>, durable: Result<(), StorageError>) {
        let Queued {
            write,
            reply,
            outcome,
            ..
        } = *self;
        drop(write);
        let outcome = outcome.unwrap_or(Err(StorageError::Closed));
        let _ = reply.send(Committed { outcome, durable });
    }
}

impl GroupTrees {
    /// Opens (or creates) the trees in `db`.
    pub(crate) fn open(
        db: &crate::engine::Db,
        sealer: Arc<Sealer>,
    ) -> Result<GroupTrees, StorageError> {
        let audit = db.open_tree(trees::AUDIT)?;
        Ok(GroupTrees {
            chain: Arc::new(AuditChain::load(&audit, Arc::clone(&sealer))?),
            sealer,
            gate: Arc::new(WriteGate::default()),
            #[cfg(test)]
            before_flush: Arc::default(),
            audit,
            requests: db.open_tree(trees::REQUESTS)?,
            intake: db.open_tree(trees::INTAKE)?,
            request_index: db.open_tree(trees::REQUEST_INDEX)?,
            idempotency: db.open_tree(trees::IDEMPOTENCY)?,
            bookings: db.open_tree(trees::BOOKINGS)?,
            due: db.open_tree(trees::DUE)?,
            active: db.open_tree(trees::ACTIVE)?,
            deliveries: db.open_tree(trees::DELIVERIES)?,
            delivery_queue: db.open_tree(trees::DELIVERY_QUEUE)?,
            tasks: db.open_tree(trees::TASKS)?,
            payer_stats: db.open_tree(trees::PAYER_STATS)?,
        })
    }

    /// Applies every job in one transaction. A job that panics is taken out of the group and told so, and
    /// the others are applied again without it: one faulty write must not stop the thread every write
    /// goes through. On `Err` nothing was written and no job left has its outcome.
    /// Read events waiting are appended after the group, with plain writes (see [`audit::append_plain`]).
    pub(crate) fn apply(&self, jobs: &mut Vec<Box<dyn Job>>) -> Result<(), StorageError> {
        let result = if jobs.is_empty() {
            Ok(())
        } else {
            self.apply_jobs(jobs)
        };
        self.append_reads(false);
        result
    }

    /// Appends the read events waiting when no flush follows: they go to the read journal as well.
    pub(crate) fn apply_reads_unflushed(&self) {
        self.append_reads(true);
    }

    fn append_reads(&self, unflushed: bool) {
        let reads = self.chain.take_reads();
        if !reads.is_empty() {
            let count = reads.len();
            // A write that fails here fails the store's next flush too; the events are not kept twice.
            if let Err(e) = audit::append_plain(&self.audit, &self.chain, reads, unflushed) {
                tracing::error!(error = %e, events = count, "audit read events could not be written");
            }
        }
    }

    fn apply_jobs(&self, jobs: &mut Vec<Box<dyn Job>>) -> Result<(), StorageError> {
        loop {
            let mut panicked = None;
            let result = self.transact(|txn| {
                for (index, job) in jobs.iter().enumerate() {
                    if catch_unwind(AssertUnwindSafe(|| job.want(txn))).is_err() {
                        panicked = Some(index);
                        return Err(ConflictableTransactionError::Abort(()));
                    }
                }
                txn.requests.fetch_wanted()?;
                for (index, job) in jobs.iter_mut().enumerate() {
                    match catch_unwind(AssertUnwindSafe(|| job.apply(txn))) {
                        Ok(applied) => applied?,
                        Err(_) => {
                            panicked = Some(index);
                            return Err(ConflictableTransactionError::Abort(()));
                        }
                    }
                }
                Ok(())
            });
            match panicked {
                Some(index) if result.is_err() => {
                    tracing::error!("a grouped write panicked; applying its group without it");
                    jobs.remove(index).fail(StorageError::WritePanicked);
                }
                _ => return result,
            }
        }
    }

    /// Runs one write alone, in its own transaction over the same trees: for callers that cannot wait for
    /// a group (synchronous paths). Not durable until [`crate::Store::durable`].
    pub(crate) fn apply_one<T>(
        &self,
        mut write: impl FnMut(&Txn) -> Verdict<T>,
    ) -> Result<T, StorageError> {
        let _open = self.gate.read().expect("write gate");
        let mut outcome = None;
        self.transact(|txn| {
            outcome = Some(write(txn)?);
            Ok(())
        })?;
        outcome.unwrap_or(Err(StorageError::Closed))
    }

    /// One sled transaction over every tree of [`Txn`]; `body` runs again from scratch when sled retries.
    /// The events it records are appended to the audit log in the same transaction.
    fn transact(
        &self,
        body: impl FnMut(&Txn) -> Result<(), ConflictableTransactionError<()>>,
    ) -> Result<(), StorageError> {
        // Held until the transaction has committed, so the chain grows one transaction at a time.
        let mut head = self.chain.head();
        let appended = RefCell::new(None);
        // sled wants an `Fn`; the body runs on this thread only, one run at a time.
        let body = RefCell::new(body);
        let trees = [
            &self.requests,
            &self.intake,
            &self.request_index,
            &self.idempotency,
            &self.bookings,
            &self.due,
            &self.active,
            &self.deliveries,
            &self.delivery_queue,
            &self.audit,
            &self.tasks,
            &self.payer_stats,
        ];
        let result = crate::engine::transaction(&trees, |views| {
            // An attempt run again may record other events than the one before (on PostgreSQL, a
            // guess the database refused makes a create decline on the next attempt): the head moves
            // by what the attempt that commits appended, or not at all.
            appended.borrow_mut().take();
            let txn = Txn {
                requests: views[0].clone(),
                intake: views[1].clone(),
                request_index: views[2].clone(),
                idempotency: views[3].clone(),
                bookings: views[4].clone(),
                due: views[5].clone(),
                active: views[6].clone(),
                deliveries: views[7].clone(),
                delivery_queue: views[8].clone(),
                audit: views[9].clone(),
                tasks: views[10].clone(),
                payer_stats: views[11].clone(),
                events: RefCell::new(Vec::new()),
                shared: RefCell::new(SharedBatches::default()),
            };
            (body.borrow_mut())(&txn)?;
            txn.shared.borrow().write(&txn, &self.sealer)?;
            let events = txn.events.take();
            if !events.is_empty() {
                let next = audit::append(&txn.audit, &self.chain, &head, events)?;
                *appended.borrow_mut() = Some(next);
            }
            Ok(())
        });
        match result {
            Ok(()) => {
                if let Some(next) = appended.take() {
                    *head = next;
                }
                Ok(())
            }
            Err(TransactionError::Storage(e)) => Err(e.into()),
            // Only a panicking job aborts (see `apply`); a write declines inside its own verdict.
            Err(TransactionError::Abort(())) => Err(StorageError::WritePanicked),
        }
    }
}
