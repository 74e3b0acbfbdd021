//! One SERIALIZABLE transaction of the PostgreSQL engine, run again from scratch after each conflict,
//! and fenced by the orchestrator lease once the process holds it.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use sled::transaction::{
    ConflictableTransactionError, TransactionError, UnabortableTransactionError,
};

use super::tree::{self, PgTxTree, Place};
use super::{engine_error, is_conflict, tx_error, wait, Conn, Pg};
use crate::engine::{Bytes, TxResult, TxTree};

pub(super) fn run<T, E>(
    conn: &Arc<Conn>,
    pg: &Pg,
    names: &[&str],
    body: impl Fn(&[TxTree]) -> Result<T, ConflictableTransactionError<E>>,
) -> Result<T, TransactionError<E>> {
    let writes = tree::Writes::default();
    let audit = super::audit_events::AuditWrites::default();
    let requests = super::requests_table::RequestWrites::default();
    let ahead = tree::ReadAhead::default();
    let attempt_seen = Rc::new(std::cell::Cell::new(0u32));
    let opening = Rc::new(Opening::new(pg));
    let cache = pg.cache();
    // Counted for the tests of how often a transaction waits on the network.
    let _counted = Counted(&opening, pg);
    let views: Vec<TxTree> = names
        .iter()
        .map(|name| {
            TxTree::Postgres(PgTxTree {
                conn: Arc::clone(conn),
                name: Arc::from(*name),
                writes: Rc::clone(&writes),
                audit: Rc::clone(&audit),
                requests: Rc::clone(&requests),
                ahead: ahead.clone(),
                attempt: Rc::clone(&attempt_seen),
                opening: Rc::clone(&opening),
            })
        })
        .collect();
    let mut attempt = 0u32;
    loop {
        attempt += 1;
        attempt_seen.set(attempt);
        if attempt > 3 {
            // Conflicts that keep coming are between transactions that keep meeting: let the others pass.
            std::thread::sleep(Duration::from_millis(u64::from(attempt.min(20))));
        }
        let storage = |e| TransactionError::Storage(engine_error(e));
        // What an attempt that met a conflict buffered is not the next attempt's.
        writes.borrow_mut().clear();
        audit.borrow_mut().clear();
        requests.borrow_mut().clear();
        ahead.clear();
        // BEGIN is sent with the attempt's first statement (see `Opening`).
        opening.phase.set(Phase::Pending);
        opening.guesses.borrow_mut().clear();
        // What ends the attempt unless it commits: `None` runs the body again.
        let failed = match body(&views) {
            Ok(value) => match opening.phase.get() {
                Phase::Refused => Some(lease_lost()),
                // A body that went on after its BEGIN failed: nothing of it may be sent, as it would
                // not be inside a transaction.
                Phase::Failed => Some(TransactionError::Storage(sled::Error::Io(
                    std::io::Error::other("the transaction could not begin"),
                ))),
                // The COMMIT ended the transaction whatever it answered (see `tree::commit`): a
                // ROLLBACK now would be a statement outside any transaction, which the server
                // answers with a "there is no transaction in progress" warning.
                Phase::Pending | Phase::Begun => {
                    match tree::commit(conn, cache, &opening, &writes, &audit, &requests) {
                        Ok(()) => return Ok(value),
                        Err(Unsettled::Refused) => {
                            tracing::error!(
                                "a write was refused: this node no longer holds the orchestrator lease"
                            );
                            return Err(lease_lost());
                        }
                        // A guess was wrong: the next attempt reads what it needs.
                        Err(Unsettled::Missed) => {
                            opening.guessing.set(false);
                            continue;
                        }
                        Err(Unsettled::Database(e)) if is_conflict(&e) || is_audit_race(&e) => {
                            continue
                        }
                        Err(Unsettled::Database(e)) => return Err(storage(e)),
                    }
                }
            },
            Err(ConflictableTransactionError::Conflict) => None,
            Err(ConflictableTransactionError::Abort(e)) => Some(TransactionError::Abort(e)),
            Err(ConflictableTransactionError::Storage(e)) => Some(TransactionError::Storage(e)),
        };
        // Only a transaction that was sent its BEGIN has anything to roll back; one whose BEGIN failed
        // was rolled back by its failure or never began, and a ROLLBACK cleans up either way.
        if opening.phase.get() != Phase::Pending {
            opening.exchanged();
            wait(conn.client.batch_execute("ROLLBACK")).map_err(storage)?;
        }
        if let Some(error) = failed {
            return Err(error);
        }
    }
}

/// Why a COMMIT did not commit.
pub(super) enum Unsettled {
    /// The lease check, sent with it, found the lease gone.
    Refused,
    /// A value the attempt guessed ([`Opening::guess`]) was not the database's.
    Missed,
    Database(tokio_postgres::Error),
}

/// Where an attempt stands with its BEGIN. The BEGIN (and with a fence, the lease check) is not sent on
/// its own: it leaves with the attempt's first read, or its COMMIT, in the same round trip, so a group of
/// creates waits on the network twice (its reads, its commit), not three times.
pub(crate) struct Opening {
    pub(super) phase: Cell<Phase>,
    pub(super) fence: Option<String>,
    /// Whether the attempt may take values from the holder's copy as guesses: not after a wrong one.
    pub(super) guessing: Cell<bool>,
    /// The values it took so, checked with its COMMIT.
    pub(super) guesses: RefCell<Vec<(Place, Option<Bytes>)>>,
    pg: Pg,
    /// Round trips so far (statements sent together, then their answers awaited).
    exchanges: Cell<u64>,
}

/// Adds a transaction's round trips to its engine's count when it ends.
struct Counted<'a>(&'a Opening, &'a Pg);

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.1.count_exchanges(self.0.exchanges.get());
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Nothing sent yet.
    Pending,
    /// Begun, and with a fence, the lease is still this node's.
    Begun,
    /// Begun, but the lease is no longer this node's: the attempt must not commit.
    Refused,
    /// The BEGIN failed.
    Failed,
}

impl Opening {
    fn new(pg: &Pg) -> Opening {
        Opening {
            phase: Cell::new(Phase::Pending),
            fence: pg.fence().map(str::to_owned),
            guessing: Cell::new(true),
            guesses: RefCell::default(),
            pg: pg.clone(),
            exchanges: Cell::new(0),
        }
    }

    /// One more round trip.
    pub(super) fn exchanged(&self) {
        self.exchanges.set(self.exchanges.get() + 1);
    }

    /// What `place` holds, taken from the lease holder's copy when it may be ([`HolderCache::guess`]),
    /// and remembered to be checked with the COMMIT.
    pub(super) fn guess(&self, place: &Place) -> Option<Option<Bytes>> {
        if !self.guessing.get() {
            return None;
        }
        let guess = self.pg.cache().guess(&place.0, &place.1)?;
        self.guesses
            .borrow_mut()
            .push((place.clone(), guess.clone()));
        Some(guess)
    }

    /// Runs `statement` in the transaction, its BEGIN sent ahead of it when not sent yet.
    pub(super) async fn begun<T>(
        &self,
        conn: &Conn,
        statement: impl std::future::Future<Output = Result<T, tokio_postgres::Error>>,
    ) -> TxResult<T> {
        self.exchanged();
        match self.phase.get() {
            Phase::Begun => return statement.await.map_err(tx_error),
            Phase::Refused => return Err(refused()),
            Phase::Failed => {
                return Err(UnabortableTransactionError::Storage(sled::Error::Io(
                    std::io::Error::other("the transaction could not begin"),
                )))
            }
            Phase::Pending => {}
        }
        let (begun, answer) = futures::join!(begin(conn, self.fence.as_deref()), statement);
        match begun {
            Ok(true) => {
                self.phase.set(Phase::Begun);
                answer.map_err(tx_error)
            }
            Ok(false) => {
                self.phase.set(Phase::Refused);
                Err(refused())
            }
            Err(e) => {
                self.phase.set(Phase::Failed);
                Err(tx_error(e))
            }
        }
    }
}

fn refused() -> UnabortableTransactionError {
    tracing::error!("a write was refused: this node no longer holds the orchestrator lease");
    UnabortableTransactionError::Storage(lease_error())
}

pub(super) fn lease_error() -> sled::Error {
    sled::Error::Io(std::io::Error::other(
        "this node no longer holds the orchestrator lease",
    ))
}

fn lease_lost<E>() -> TransactionError<E> {
    TransactionError::Storage(lease_error())
}

/// Begins a SERIALIZABLE transaction on `conn`; with a `fence`, checks in the same round trip (the two
/// statements pipelined) that the lease is still the fence's. `false`: it is not, and the transaction must
/// be rolled back.
pub(super) async fn begin(conn: &Conn, fence: Option<&str>) -> Result<bool, tokio_postgres::Error> {
    let begin = conn
        .client
        .batch_execute("BEGIN ISOLATION LEVEL SERIALIZABLE");
    let Some(holder) = fence else {
        return begin.await.map(|()| true);
    };
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 1] = [&holder];
    let held = conn.client.query_opt(&conn.fence, &params);
    let (begun, held) = futures::join!(begin, held);
    begun?;
    Ok(held?.is_some())
}

/// Whether `e` is another node's append taking the audit log's next number first: the log is one chain
/// however many nodes append to it, and the primary key on `seq` is what keeps it so. The transaction runs
/// again, and its append then chains after the tip it reads ([`PgTxTree::retried`]).
pub(super) fn is_audit_race(e: &tokio_postgres::Error) -> bool {
    e.as_db_error().is_some_and(|db| {
        *db.code() == tokio_postgres::error::SqlState::UNIQUE_VIOLATION
            && db.constraint() == Some(super::audit_events::PRIMARY_KEY)
    })
}
