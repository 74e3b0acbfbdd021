//! The audit append of the engine's own transactions ([`super::native`]): the events chained after the
//! log's tip as the transaction reads it, inserted as rows of `audit_events`, and the sealed head
//! rewritten beside them.

use super::native::Attempt;
use super::Conn;
use crate::audit::head::{Head, HEAD_KEY};
use crate::audit::{AuditChain, NewEvent};
use crate::trees;

/// Appends `events` inside the transaction open on `conn`; answers the head they end at. `kept` is the
/// head in memory: a log that ends before it lost events this node wrote, and is refused.
pub(super) async fn append(
    conn: &Conn,
    chain: &AuditChain,
    kept: &Head,
    events: &[NewEvent],
) -> Attempt<Head> {
    let last = conn.client.query_opt(&conn.audit_last, &[]).await?;
    let last: Option<String> = last.map(|row| row.get(0));
    let (next, rows) = chain.rows_after_tip(kept, last.as_deref(), events)?;
    super::audit_events::insert(conn, &rows).await?;
    let record = next.record(&chain.sealer);
    conn.client
        .query(&conn.upsert, &[&trees::AUDIT, &HEAD_KEY, &record])
        .await?;
    Ok(next)
}
