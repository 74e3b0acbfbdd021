//! One SERIALIZABLE transaction of the PostgreSQL engine, run again from scratch after each conflict,
//! and fenced by the orchestrator lease once the process holds it.

use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use sled::transaction::{ConflictableTransactionError, TransactionError};

use super::tree::{self, PgTxTree};
use super::{engine_error, is_conflict, wait, Conn};
use crate::engine::TxTree;

pub(super) fn run<T, E>(
    conn: &Arc<Conn>,
    names: &[&str],
    fence: Option<&str>,
    body: impl Fn(&[TxTree]) -> Result<T, ConflictableTransactionError<E>>,
) -> Result<T, TransactionError<E>> {
    let writes = tree::Writes::default();
    let audit = super::audit_events::AuditWrites::default();
    let requests = super::requests_table::RequestWrites::default();
    let ahead = tree::ReadAhead::default();
    let attempt_seen = Rc::new(std::cell::Cell::new(0u32));
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
        let begun = wait(begin(conn, fence));
        if !matches!(begun, Ok(true)) {
            // Whatever was begun is not this attempt's: the connection goes back to the pool clean.
            wait(conn.client.batch_execute("ROLLBACK")).map_err(storage)?;
            match begun {
                Err(e) if is_conflict(&e) => continue,
                Err(e) => return Err(storage(e)),
                _ => {
                    tracing::error!(
                        "a write was refused: this node no longer holds the orchestrator lease"
                    );
                    return Err(TransactionError::Storage(sled::Error::Io(
                        std::io::Error::other("this node no longer holds the orchestrator lease"),
                    )));
                }
            }
        }
        // What an attempt that met a conflict buffered is not the next attempt's.
        writes.borrow_mut().clear();
        audit.borrow_mut().clear();
        requests.borrow_mut().clear();
        ahead.clear();
        // What ends the attempt unless it commits: `None` runs the body again.
        let failed = match body(&views) {
            // The COMMIT ended the transaction whatever it answered (see `tree::commit`): a ROLLBACK
            // now would be a statement outside any transaction, which the server answers with a
            // "there is no transaction in progress" warning.
            Ok(value) => match tree::commit(conn, &writes, &audit, &requests) {
                Ok(()) => return Ok(value),
                Err(e) if is_conflict(&e) || is_audit_race(&e) => continue,
                Err(e) => return Err(storage(e)),
            },
            Err(ConflictableTransactionError::Conflict) => None,
            Err(ConflictableTransactionError::Abort(e)) => Some(TransactionError::Abort(e)),
            Err(ConflictableTransactionError::Storage(e)) => Some(TransactionError::Storage(e)),
        };
        wait(conn.client.batch_execute("ROLLBACK")).map_err(storage)?;
        if let Some(error) = failed {
            return Err(error);
        }
    }
}

/// Begins a SERIALIZABLE transaction on `conn`; with a `fence`, checks in the same round trip (the two
/// statements pipelined) that the lease is still the fence's. `false`: it is not, and the transaction must
/// be rolled back.
async fn begin(conn: &Conn, fence: Option<&str>) -> Result<bool, tokio_postgres::Error> {
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
fn is_audit_race(e: &tokio_postgres::Error) -> bool {
    e.as_db_error().is_some_and(|db| {
        *db.code() == tokio_postgres::error::SqlState::UNIQUE_VIOLATION
            && db.constraint() == Some(super::audit_events::PRIMARY_KEY)
    })
}
