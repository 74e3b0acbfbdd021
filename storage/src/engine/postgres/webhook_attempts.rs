//! The webhook attempt log as the table `webhook_attempts`, a row per attempt with the API's fields as
//! columns: a DBA can see which receivers fail, and how slowly they answer, with SQL alone. The attempt's
//! number comes from the sequence every node shares, so a request's attempts keep their order whichever
//! node sent them.

use chrono::{DateTime, Utc};
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::Row;

use super::native::{lease_lost, FENCE_HOLDS};
use super::tables::Tables;
use crate::engine::operations::{AttemptEntry, WebhookAttempts};
use crate::{AttemptRecord, RequestId, StorageError};

/// The table, created by `switchboard migrate` (schema version 4); the rows of earlier versions are moved
/// by [`move_rows`].
pub(super) const CREATE: &str = "CREATE TABLE IF NOT EXISTS webhook_attempts (
        request_id uuid NOT NULL,
        seq bigint NOT NULL DEFAULT nextval('switchboard_ids'),
        at timestamptz NOT NULL,
        round integer NOT NULL,
        attempt integer NOT NULL,
        status_code integer,
        error text,
        latency_ms bigint NOT NULL,
        redelivery integer,
        url text,
        PRIMARY KEY (request_id, seq))";

/// Logs an attempt under `$3`, or under the next number when `$3` is null; answers the number, or no
/// row when the lease is not `$1`'s.
fn insert() -> String {
    format!(
        "INSERT INTO webhook_attempts
            (request_id, seq, at, round, attempt, status_code, error, latency_ms, redelivery, url)
        SELECT $2::uuid, coalesce($3, nextval('switchboard_ids')),
            'epoch'::timestamptz + $4 * interval '1 microsecond', $5, $6, $7, $8, $9, $10, $11
        WHERE {FENCE_HOLDS}
        ON CONFLICT (request_id, seq) DO NOTHING
        RETURNING seq"
    )
}

fn update() -> String {
    format!(
        "UPDATE webhook_attempts
        SET at = 'epoch'::timestamptz + $4 * interval '1 microsecond', round = $5, attempt = $6,
            status_code = $7, error = $8, latency_ms = $9, redelivery = $10, url = $11
        WHERE request_id = $2::uuid AND seq = $3 AND {FENCE_HOLDS}"
    )
}

const SELECT: &str =
    "SELECT (extract(epoch FROM at) * 1000000)::bigint, round, attempt, status_code, \
                      error, latency_ms, redelivery, url FROM webhook_attempts";

/// An attempt as the parameters of a statement.
struct Columns {
    request_id: String,
    at: i64,
    round: i32,
    attempt: i32,
    status_code: Option<i32>,
    error: Option<String>,
    latency_ms: i64,
    redelivery: Option<i32>,
    url: Option<String>,
}

impl Columns {
    fn of(attempt: &AttemptRecord) -> Columns {
        Columns {
            request_id: attempt.request_id.as_str().to_owned(),
            at: attempt.at.timestamp_micros(),
            round: attempt.round as i32,
            attempt: attempt.attempt as i32,
            status_code: attempt.status_code.map(i32::from),
            error: attempt.error.clone(),
            latency_ms: attempt.latency_ms.min(i64::MAX as u64) as i64,
            redelivery: attempt.redelivery.map(|n| n as i32),
            url: Some(attempt.url.clone()).filter(|url| !url.is_empty()),
        }
    }

    /// `$1` the lease's holder, `$2` the request, `$3` the attempt's number (`seq`), then the other
    /// columns.
    fn params<'a>(
        &'a self,
        holder: &'a Option<String>,
        seq: &'a Option<i64>,
    ) -> [(&'a (dyn ToSql + Sync), Type); 11] {
        [
            (holder, Type::TEXT),
            (&self.request_id, Type::TEXT),
            (seq, Type::INT8),
            (&self.at, Type::INT8),
            (&self.round, Type::INT4),
            (&self.attempt, Type::INT4),
            (&self.status_code, Type::INT4),
            (&self.error, Type::TEXT),
            (&self.latency_ms, Type::INT8),
            (&self.redelivery, Type::INT4),
            (&self.url, Type::TEXT),
        ]
    }
}

fn attempt_of(request_id: &RequestId, row: &Row) -> Result<AttemptRecord, StorageError> {
    let at: i64 = row.get(0);
    let at = DateTime::<Utc>::from_timestamp_micros(at).ok_or_else(|| StorageError::Corrupt {
        kind: "webhook attempt",
        reason: format!("its time {at} is out of range"),
    })?;
    Ok(AttemptRecord {
        request_id: request_id.clone(),
        url: row.get::<_, Option<String>>(7).unwrap_or_default(),
        at,
        round: row.get::<_, i32>(1) as u32,
        attempt: row.get::<_, i32>(2) as u32,
        status_code: row.get::<_, Option<i32>>(3).map(|code| code as u16),
        error: row.get(4),
        latency_ms: row.get::<_, i64>(5) as u64,
        redelivery: row.get::<_, Option<i32>>(6).map(|n| n as u32),
    })
}

/// Whether `id` can be a request's (every request id is a UUID): an id a caller typed may be anything,
/// and a cast of it would fail the statement.
fn names_a_request(id: &RequestId) -> bool {
    super::requests_table::is_uuid(id.as_str())
}

impl WebhookAttempts for Tables<'_> {
    async fn begin_attempt(&self, attempt: &AttemptRecord) -> Result<AttemptEntry, StorageError> {
        let (columns, holder) = (Columns::of(attempt), self.pg.fence_holder());
        let row = self
            .pg
            .single(async |conn| {
                let params = columns.params(&holder, &None);
                conn.client.query_typed(&insert(), &params).await
            })
            .await?;
        let seq: i64 = row.first().ok_or_else(lease_lost)?.get(0);
        Ok(AttemptEntry {
            request_id: attempt.request_id.clone(),
            seq: seq as u64,
        })
    }

    async fn record_attempt(&self, attempt: &AttemptRecord) -> Result<(), StorageError> {
        self.begin_attempt(attempt).await.map(drop)
    }

    async fn finish_attempt(
        &self,
        entry: &AttemptEntry,
        attempt: &AttemptRecord,
    ) -> Result<(), StorageError> {
        let (columns, holder) = (Columns::of(attempt), self.pg.fence_holder());
        let seq = Some(entry.seq as i64);
        // No row written: the request was purged meanwhile, or the lease is gone, and a fenced node's
        // next transaction says so.
        self.pg
            .single(async |conn| {
                let params = columns.params(&holder, &seq);
                conn.client.execute_typed(&update(), &params).await
            })
            .await
            .map(drop)
    }

    async fn attempts(&self, request_id: &RequestId) -> Result<Vec<AttemptRecord>, StorageError> {
        if !names_a_request(request_id) {
            return Ok(Vec::new());
        }
        let rows = self
            .pg
            .read(async |conn| {
                let sql = format!("{SELECT} WHERE request_id = $1::uuid ORDER BY seq");
                let id = request_id.as_str();
                conn.client.query_typed(&sql, &[(&id, Type::TEXT)]).await
            })
            .await?;
        rows.iter().map(|row| attempt_of(request_id, row)).collect()
    }

    async fn remove_attempts(&self, request_id: &RequestId) -> Result<(), StorageError> {
        if !names_a_request(request_id) {
            return Ok(());
        }
        let (id, holder) = (request_id.as_str(), self.pg.fence_holder());
        self.pg
            .single(async |conn| {
                let sql = format!(
                    "DELETE FROM webhook_attempts WHERE request_id = $2::uuid AND {FENCE_HOLDS}"
                );
                let params: [(&(dyn ToSql + Sync), Type); 2] =
                    [(&holder, Type::TEXT), (&id, Type::TEXT)];
                conn.client.execute_typed(&sql, &params).await
            })
            .await
            .map(drop)
    }
}

/// Version 4: the attempts earlier versions kept in `switchboard_kv` (a request id, a zero byte and the
/// attempt's number as the key, the encoded record as the value) become rows; the kv rows go.
pub(super) async fn move_rows(
    transaction: &tokio_postgres::Transaction<'_>,
) -> Result<u64, tokio_postgres::Error> {
    let rows = transaction
        .query(
            "SELECT key, value FROM switchboard_kv WHERE tree = 'delivery_attempts'",
            &[],
        )
        .await?;
    let mut moved = 0;
    for row in &rows {
        let (key, value): (&[u8], &[u8]) = (row.get(0), row.get(1));
        let Some(seq) = key.len().checked_sub(8).map(|at| &key[at..]) else {
            continue;
        };
        let seq = i64::from_be_bytes(seq.try_into().expect("8 bytes"));
        let Ok(attempt) = crate::codec::decode::<AttemptRecord>(value) else {
            tracing::warn!(
                "a webhook attempt that cannot be read was left out of webhook_attempts"
            );
            continue;
        };
        let (columns, seq) = (Columns::of(&attempt), Some(seq));
        transaction
            .query_typed(&insert(), &columns.params(&None, &seq))
            .await?;
        moved += 1;
    }
    transaction
        .execute(
            "DELETE FROM switchboard_kv WHERE tree = 'delivery_attempts'",
            &[],
        )
        .await?;
    Ok(moved)
}
