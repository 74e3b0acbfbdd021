//! The PostgreSQL engine's own transactions: async from BEGIN to COMMIT, each operation's SQL on its own
//! tables, the operation's audit events appended in the same transaction, the whole run again after a
//! serialization failure. No thread waits on the database: the caller's task awaits each round trip.
//!
//! Operations still written against the trees run through [`super::transaction`]; both kinds of
//! transaction append to the one audit chain, and the primary key on `audit_events.seq` orders them.

use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use super::audit_append;
use super::transaction::is_audit_race;
use super::{describe, is_conflict, Conn, Pg};
use crate::audit::{AuditChain, NewEvent};
use crate::StorageError;

/// Why an attempt of a transaction ended without committing.
pub(crate) enum Failed {
    /// The database's answer: a conflict runs the transaction again, anything else fails it.
    Database(tokio_postgres::Error),
    /// The operation's own refusal: nothing is written.
    Abort(StorageError),
}

impl From<tokio_postgres::Error> for Failed {
    fn from(e: tokio_postgres::Error) -> Failed {
        Failed::Database(e)
    }
}

impl From<StorageError> for Failed {
    fn from(e: StorageError) -> Failed {
        Failed::Abort(e)
    }
}

/// The condition of a write fenced by itself ([`Pg::single`]): `$1` is [`Pg::fence_holder`].
pub(crate) const FENCE_HOLDS: &str =
    "($1::text IS NULL OR EXISTS (SELECT 1 FROM switchboard_lease \
     WHERE name = 'orchestrator' AND holder = $1 AND expires_at >= now()))";

/// The refusal of a write this node may no longer make.
pub(crate) fn lease_lost() -> StorageError {
    super::transaction::lease_error().into()
}

/// The result of one attempt's body.
pub(crate) type Attempt<T> = Result<T, Failed>;

impl Pg {
    /// Runs `body` in a SERIALIZABLE transaction, fenced by the lease like every other, and appends
    /// `events` in it when the body answers that it changed something. Runs it again from scratch after
    /// a conflict (another transaction's, or another node's append taking the audit log's next number).
    pub(crate) async fn audited<T, F, Fut>(
        &self,
        chain: &AuditChain,
        events: &[NewEvent],
        body: F,
    ) -> Result<T, StorageError>
    where
        F: Fn(Arc<Conn>) -> Fut,
        Fut: Future<Output = Attempt<(T, bool)>>,
    {
        // Never waited for: an append of the trees' transactions holds the head across its round trips.
        let kept = chain.head_now();
        let conn = self.checkout_async().await;
        let mut attempt = 0u32;
        let (value, head) = loop {
            attempt += 1;
            if attempt > 3 {
                // Transactions that keep meeting: let the others pass.
                tokio::time::sleep(Duration::from_millis(u64::from(attempt.min(20)))).await;
            }
            let mut committing = false;
            conn.open.store(true, Ordering::Release);
            let outcome = async {
                if !super::transaction::begin(&conn.conn, self.fence()).await? {
                    return Err(Failed::Abort(lease_lost()));
                }
                let (value, changed) = body(Arc::clone(&conn.conn)).await?;
                let head = match changed && !events.is_empty() {
                    true => Some(audit_append::append(&conn.conn, chain, &kept, events).await?),
                    false => None,
                };
                committing = true;
                conn.conn.client.batch_execute("COMMIT").await?;
                Ok((value, head))
            }
            .await;
            let failed = match outcome {
                Ok(done) => {
                    conn.open.store(false, Ordering::Release);
                    break done;
                }
                Err(failed) => failed,
            };
            // A COMMIT that failed has ended its transaction already.
            if !committing {
                let _ = conn.conn.client.batch_execute("ROLLBACK").await;
            }
            conn.open.store(false, Ordering::Release);
            match failed {
                Failed::Database(e) if is_conflict(&e) || is_audit_race(&e) => continue,
                Failed::Database(e) => {
                    return Err(StorageError::Database(format!(
                        "postgresql: {}",
                        describe(&e)
                    )))
                }
                Failed::Abort(e) => return Err(e),
            }
        };
        drop(conn);
        if let Some(head) = head {
            chain.advance_to(head);
        }
        Ok(value)
    }

    /// A write of one statement, outside any transaction: atomic alone, pipelined on the shared connection
    /// with every other caller's, run again after a serialization failure. The statement is fenced by
    /// itself: it writes only where [`FENCE_HOLDS`] holds, given [`Pg::fence_holder`] as its parameter.
    pub(crate) async fn single<T>(
        &self,
        write: impl AsyncFn(Arc<Conn>) -> Result<T, tokio_postgres::Error>,
    ) -> Result<T, StorageError> {
        loop {
            match write(self.shared()).await {
                Err(e) if is_conflict(&e) => continue,
                done => {
                    return done.map_err(|e| {
                        StorageError::Database(format!("postgresql: {}", describe(&e)))
                    })
                }
            }
        }
    }

    /// The holder a [`Pg::single`] write checks the lease against: `None` before this node is fenced
    /// (a store opened by `migrate` or a test), when the check passes.
    pub(crate) fn fence_holder(&self) -> Option<String> {
        self.fence().map(str::to_owned)
    }

    /// A statement outside any transaction, on the shared connection: a read.
    pub(crate) async fn read<T>(
        &self,
        read: impl AsyncFnOnce(Arc<Conn>) -> Result<T, tokio_postgres::Error>,
    ) -> Result<T, StorageError> {
        read(self.shared())
            .await
            .map_err(|e| StorageError::Database(format!("postgresql: {}", describe(&e))))
    }
}
