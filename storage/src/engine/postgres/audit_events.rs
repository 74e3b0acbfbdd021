//! The audit log on PostgreSQL: the table `audit_events`, one row per event. Its columns are the API's
//! fields, for a DBA's reports; `line` is the event as it was hashed, with its MAC, which the chain is
//! checked from. The application only ever inserts and selects rows, so the role `serve` runs as needs
//! no more than `SELECT, INSERT` on it (docs/several-nodes.md has the grants).

use std::cell::RefCell;
use std::rc::Rc;

use tokio_postgres::types::ToSql;

use super::tree::PgTree;
use super::{wait, Conn};

/// The name PostgreSQL gives the primary key of `audit_events` (on `seq`): an insert it refuses met
/// another node's append of the same number.
pub(super) const PRIMARY_KEY: &str = "audit_events_pkey";

/// Events a page of reads holds: the verify of a long log reads it this many at a time.
pub(crate) const PAGE: i64 = 2_000;

/// One event as `audit_events` holds it.
#[derive(Clone, Debug)]
pub(crate) struct AuditRow {
    pub(crate) seq: i64,
    /// RFC 3339, as the event says.
    pub(crate) at: String,
    pub(crate) action: String,
    pub(crate) actor_kind: String,
    pub(crate) actor_id: String,
    pub(crate) target_kind: Option<String>,
    pub(crate) target_id: Option<String>,
    pub(crate) outcome: String,
    pub(crate) ip: Option<String>,
    pub(crate) prev_hash: String,
    pub(crate) hash: String,
    pub(crate) line: String,
}

/// Rows a transaction appends, sent with its other writes before its COMMIT.
pub(crate) type AuditWrites = Rc<RefCell<Vec<AuditRow>>>;

pub(super) const CREATE: &str = "CREATE TABLE IF NOT EXISTS audit_events (
        seq bigint PRIMARY KEY,
        at timestamptz NOT NULL,
        action text NOT NULL,
        actor_kind text NOT NULL,
        actor_id text NOT NULL,
        target_kind text,
        target_id text,
        outcome text NOT NULL,
        ip text,
        prev_hash text NOT NULL,
        hash text NOT NULL,
        line text NOT NULL)";

pub(super) const INSERT: &str = "INSERT INTO audit_events
        (seq, at, action, actor_kind, actor_id, target_kind, target_id, outcome, ip, prev_hash, hash, line)
        SELECT seq, at::timestamptz, action, actor_kind, actor_id, target_kind, target_id, outcome, ip,
            prev_hash, hash, line
        FROM unnest($1::int8[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
            $8::text[], $9::text[], $10::text[], $11::text[], $12::text[])
        AS t(seq, at, action, actor_kind, actor_id, target_kind, target_id, outcome, ip, prev_hash, hash,
            line)";
pub(super) const AFTER: &str = "SELECT line FROM audit_events WHERE seq > $1 ORDER BY seq LIMIT $2";
pub(super) const AT: &str = "SELECT line FROM audit_events WHERE seq = $1";
pub(super) const LAST: &str = "SELECT line FROM audit_events ORDER BY seq DESC LIMIT 1";

/// The columns of some rows, as the parameters of [`INSERT`].
pub(super) struct Columns {
    seq: Vec<i64>,
    text: [Vec<String>; 8],
    optional: [Vec<Option<String>>; 3],
}

impl Columns {
    pub(super) fn of(rows: &[AuditRow]) -> Columns {
        let text =
            |pick: fn(&AuditRow) -> &String| rows.iter().map(|row| pick(row).clone()).collect();
        let optional = |pick: fn(&AuditRow) -> &Option<String>| {
            rows.iter().map(|row| pick(row).clone()).collect()
        };
        Columns {
            seq: rows.iter().map(|row| row.seq).collect(),
            text: [
                text(|row| &row.at),
                text(|row| &row.action),
                text(|row| &row.actor_kind),
                text(|row| &row.actor_id),
                text(|row| &row.outcome),
                text(|row| &row.prev_hash),
                text(|row| &row.hash),
                text(|row| &row.line),
            ],
            optional: [
                optional(|row| &row.target_kind),
                optional(|row| &row.target_id),
                optional(|row| &row.ip),
            ],
        }
    }

    pub(super) fn params(&self) -> [&(dyn ToSql + Sync); 12] {
        let [at, action, actor_kind, actor_id, outcome, prev_hash, hash, line] = &self.text;
        let [target_kind, target_id, ip] = &self.optional;
        [
            &self.seq,
            at,
            action,
            actor_kind,
            actor_id,
            target_kind,
            target_id,
            outcome,
            ip,
            prev_hash,
            hash,
            line,
        ]
    }
}

/// Inserts `rows` on `conn` (inside its transaction, when one is open).
pub(super) async fn insert(conn: &Conn, rows: &[AuditRow]) -> Result<u64, tokio_postgres::Error> {
    if rows.is_empty() {
        return Ok(0);
    }
    let columns = Columns::of(rows);
    conn.client
        .execute(&conn.audit_insert, &columns.params())
        .await
}

impl super::tree::PgTxTree {
    /// Whether this run of the transaction follows one that met a conflict, maybe another node's append.
    pub(crate) fn retried(&self) -> bool {
        self.attempt.get() > 1
    }

    /// The line of the newest event, as this transaction sees it: the tip an append chains after when
    /// other nodes append to the same log.
    pub(crate) fn audit_last_line(
        &self,
    ) -> Result<Option<String>, sled::transaction::UnabortableTransactionError> {
        wait(self.conn.client.query_opt(&self.conn.audit_last, &[]))
            .map(|row| row.map(|row| row.get(0)))
            .map_err(super::tx_error)
    }
}

impl PgTree {
    /// Appends `rows` in a statement of its own.
    pub(crate) fn insert_audit_rows(&self, rows: &[AuditRow]) -> sled::Result<()> {
        self.retried(|conn| wait(insert(conn, rows))).map(drop)
    }

    /// The lines of the events after number `after`, in order, at most [`PAGE`].
    pub(crate) fn audit_lines_after(&self, after: u64) -> sled::Result<Vec<String>> {
        let after = after as i64;
        self.retried(|conn| wait(conn.client.query(&conn.audit_after, &[&after, &PAGE])))
            .map(|rows| rows.iter().map(|row| row.get(0)).collect())
    }

    /// The line of event `seq`, if it is there.
    pub(crate) fn audit_line_at(&self, seq: u64) -> sled::Result<Option<String>> {
        let seq = seq as i64;
        self.retried(|conn| wait(conn.client.query_opt(&conn.audit_at, &[&seq])))
            .map(|row| row.map(|row| row.get(0)))
    }

    /// The line of the newest event, if any.
    pub(crate) fn audit_last_line(&self) -> sled::Result<Option<String>> {
        self.retried(|conn| wait(conn.client.query_opt(&conn.audit_last, &[])))
            .map(|row| row.map(|row| row.get(0)))
    }

    /// Runs `sql` as whoever can write the database: test support for tampering with the log.
    #[cfg(any(test, feature = "test-hooks"))]
    pub(crate) fn execute_for_tests(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> sled::Result<u64> {
        self.retried(|conn| wait(conn.client.execute(sql, params)))
    }
}
