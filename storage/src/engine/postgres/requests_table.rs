//! The table `requests` on PostgreSQL: one row per request, with the columns a DBA reports from (state,
//! account, environment, schema, batch, created, due, completed) and the request's own sealed record
//! beside them once it has one (until its first change its data is sealed in its batch's intake chunk).
//! Rows are written in the transaction that creates, changes or purges the request, so a report never
//! disagrees with what the API answers; a purged request has no row.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use tokio_postgres::types::ToSql;

use super::tree::PgTree;
use super::{wait, Conn};

/// One request as `requests` holds it. Instants are RFC 3339 text, dates `YYYY-MM-DD`.
#[derive(Clone, Debug)]
pub(crate) struct RequestRow {
    pub(crate) request_id: String,
    pub(crate) account_id: String,
    pub(crate) environment: String,
    pub(crate) schema_id: String,
    pub(crate) state: String,
    pub(crate) batch_id: String,
    pub(crate) created_at: String,
    pub(crate) due_date: String,
    pub(crate) completed_at: Option<String>,
    /// The request's own sealed record; `None` keeps the one stored (or none, at creation).
    pub(crate) sealed: Option<Vec<u8>>,
}

/// What a transaction writes to `requests`, by request id: a row, or `None` to delete it. The last write
/// of an id wins, as one statement may change a row only once.
pub(crate) type RequestWrites = Rc<RefCell<BTreeMap<String, Option<RequestRow>>>>;

pub(super) const CREATE: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS requests (
        request_id uuid PRIMARY KEY,
        account_id text NOT NULL,
        environment text NOT NULL,
        schema_id text NOT NULL,
        state text NOT NULL,
        batch_id uuid NOT NULL,
        created_at timestamptz NOT NULL,
        due_date date NOT NULL,
        completed_at timestamptz,
        sealed bytea)",
    "CREATE INDEX IF NOT EXISTS requests_by_account ON requests (account_id, environment, created_at)",
    "CREATE INDEX IF NOT EXISTS requests_by_state ON requests (state, completed_at)",
];

pub(super) const UPSERT: &str = "INSERT INTO requests
        (request_id, account_id, environment, schema_id, state, batch_id, created_at, due_date,
            completed_at, sealed)
        SELECT id::uuid, account_id, environment, schema_id, state, batch_id::uuid, created_at::timestamptz,
            due_date::date, completed_at::timestamptz, sealed
        FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
            $8::text[], $9::text[], $10::bytea[])
        AS t(id, account_id, environment, schema_id, state, batch_id, created_at, due_date, completed_at,
            sealed)
        ON CONFLICT (request_id) DO UPDATE SET state = EXCLUDED.state,
            completed_at = EXCLUDED.completed_at, sealed = COALESCE(EXCLUDED.sealed, requests.sealed)";
pub(super) const DELETE: &str = "DELETE FROM requests WHERE request_id = ANY($1::text[]::uuid[])";

/// Whether `id` can be a row's key: the column is a uuid, and a request id that is no UUID (one read
/// from a client's path) names no row.
pub(crate) fn is_uuid(id: &str) -> bool {
    uuid::Uuid::try_parse(id).is_ok()
}

/// Sends `writes` on `conn`, inside its transaction: the rows, then the deletions.
pub(super) async fn write(
    conn: &Conn,
    writes: BTreeMap<String, Option<RequestRow>>,
) -> Result<(), tokio_postgres::Error> {
    let (rows, gone): (Vec<_>, Vec<_>) = writes
        .into_iter()
        .filter(|(id, _)| is_uuid(id))
        .partition(|(_, row)| row.is_some());
    let rows: Vec<RequestRow> = rows.into_iter().filter_map(|(_, row)| row).collect();
    let gone: Vec<String> = gone.into_iter().map(|(id, _)| id).collect();
    let upserts = async {
        if rows.is_empty() {
            return Ok(0);
        }
        let columns = Columns::of(&rows);
        conn.client
            .execute(&conn.requests_upsert, &columns.params())
            .await
    };
    let deletes = async {
        if gone.is_empty() {
            return Ok(0);
        }
        conn.client.execute(&conn.requests_delete, &[&gone]).await
    };
    let (upserts, deletes) = futures::join!(upserts, deletes);
    upserts.and(deletes).map(drop)
}

/// The columns of some rows, as the parameters of [`UPSERT`].
pub(super) struct Columns {
    text: [Vec<String>; 8],
    completed_at: Vec<Option<String>>,
    sealed: Vec<Option<Vec<u8>>>,
}

impl Columns {
    pub(super) fn of(rows: &[RequestRow]) -> Columns {
        let text =
            |pick: fn(&RequestRow) -> &String| rows.iter().map(|r| pick(r).clone()).collect();
        Columns {
            text: [
                text(|r| &r.request_id),
                text(|r| &r.account_id),
                text(|r| &r.environment),
                text(|r| &r.schema_id),
                text(|r| &r.state),
                text(|r| &r.batch_id),
                text(|r| &r.created_at),
                text(|r| &r.due_date),
            ],
            completed_at: rows.iter().map(|r| r.completed_at.clone()).collect(),
            sealed: rows.iter().map(|r| r.sealed.clone()).collect(),
        }
    }

    pub(super) fn params(&self) -> [&(dyn ToSql + Sync); 10] {
        let [id, account, environment, schema, state, batch, created, due] = &self.text;
        [
            id,
            account,
            environment,
            schema,
            state,
            batch,
            created,
            due,
            &self.completed_at,
            &self.sealed,
        ]
    }
}

impl PgTree {
    /// Writes `rows` in a statement of their own (a conversion of the store, outside any transaction).
    pub(crate) fn upsert_request_rows(&self, rows: &[RequestRow]) -> sled::Result<()> {
        let rows: Vec<RequestRow> = rows
            .iter()
            .filter(|row| is_uuid(&row.request_id))
            .cloned()
            .collect();
        if rows.is_empty() {
            return Ok(());
        }
        let columns = Columns::of(&rows);
        self.retried(|conn| {
            wait(
                conn.client
                    .execute(&conn.requests_upsert, &columns.params()),
            )
        })
        .map(drop)
    }
}
