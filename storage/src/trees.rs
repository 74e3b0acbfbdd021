//! Tree names and key layouts. A key layout is part of the on-disk format: change it only with a migration.

/// `account id -> AccountRecord`.
pub(crate) const ACCOUNTS: &str = "accounts";
/// `api key -> account id`: the index that lets `/v1/auth` find an account by key.
pub(crate) const CREDENTIAL_KEYS: &str = "credential_keys";
/// `schema id -> SchemaHeadRecord`.
pub(crate) const SCHEMA_HEADS: &str = "schema_heads";
/// `schema id \0 version (u32 big-endian) -> SchemaVersionRecord`.
pub(crate) const SCHEMA_VERSIONS: &str = "schema_versions";
/// `payer name -> PayerRecord`.
pub(crate) const PAYERS: &str = "payers";
/// `request id -> RequestRecord`: a request's own record, written from its first change on (before that,
/// its batch in `intake` holds it).
pub(crate) const REQUESTS: &str = "requests";
/// `batch id, chunk (u16 BE) -> IntakeRecord`: the requests of one batch as created, 64 to a chunk; only
/// the member count (in chunk 0) once every member has a record of its own. A batch converted from
/// layout 3 has only its chunk 0, naming its members (stored alone, see `requests::alone`).
pub(crate) const INTAKE: &str = "intake";
/// `account \0 env \0 created (u64 micros BE) id`: listing by creation time. A batch's entry (value: its
/// member count, u32 BE) stands for all its members; a request stored alone (converted from layout 3)
/// has an entry of its own (empty value).
pub(crate) const REQUEST_INDEX: &str = "request_index";
/// `account \0 env \0 batch id \0 created (u64 micros BE) request id -> ()`: layout 3's index of the
/// batches created before batches were stored whole. Read once, by the conversion to layout 4, which
/// names their members in `intake` and empties it; nothing else opens it.
pub(crate) const BATCH_INDEX: &str = "batch_index";
/// `account \0 env \0 HMAC(internal id) -> request id`: idempotency keys, the client's text hashed under
/// a key of the keyring.
pub(crate) const IDEMPOTENCY: &str = "idempotency";
/// `account \0 env \0 YYYY-MM-DD -> u32 BE`: requests booked per business day.
pub(crate) const BOOKINGS: &str = "bookings";
/// `due_at (u64 micros BE) id`: booked requests by the instant their day begins. A batch's entry (value:
/// its member count, u32 BE) stands for its members until it is retired; a request stored alone
/// (converted from layout 3) has an entry of its own (empty value).
pub(crate) const DUE: &str = "due";
/// `request id -> ()`: requests whose run has started and not finished (start-up recovery reads it).
pub(crate) const ACTIVE: &str = "active";
/// `request id -> DeliveryRecord`: the webhook outbox.
pub(crate) const DELIVERIES: &str = "deliveries";
/// `next round (u64 micros BE) request id -> ()`: deliveries by when their next round is due.
pub(crate) const DELIVERY_QUEUE: &str = "delivery_queue";
/// `task id -> request id`: the tasks people work (`human_fallback`), oldest first (task ids are UUID v7);
/// the task itself lives in its request's run.
pub(crate) const TASKS: &str = "tasks";
/// `payer name \0 day (days from the common era, u32 BE) -> PayerDayRecord`: what is learned of each
/// payer's line, one record per local day in the payer's zone, kept 90 days (no PHI).
pub(crate) const PAYER_STATS: &str = "payer_stats";
/// `request id \0 sequence (u64 BE) -> AttemptRecord`: the delivery log.
pub(crate) const DELIVERY_ATTEMPTS: &str = "delivery_attempts";
/// `first sequence number (u64 BE) -> events, one JSON object per line`: the audit log's hash chain, a
/// block per transaction that appended to it.
pub(crate) const AUDIT: &str = "audit";
/// `name -> OperatorRecord`: the operators of the admin API and the console.
pub(crate) const OPERATORS: &str = "operators";
/// `SHA-256 of a token (hex) -> operator name`: finds the operator a token belongs to.
pub(crate) const OPERATOR_TOKENS: &str = "operator_tokens";
/// `owner (batch id, or a request id that names none) -> vault epoch, nonce, wrapped data key`: data keys
/// kept since a purge replaced the epoch key they derived from (see `seal::overrides`).
pub(crate) const DATA_KEYS: &str = "data_keys";
/// `owner -> rekey flag, epochs (u32 BE)`: purges whose keys are still to be replaced; finished at the
/// next opening when a crash interrupted one.
pub(crate) const SHREDS: &str = "shreds";
/// `call id -> ()`: calls of purged requests, whose recording links answer 404 from then on.
pub(crate) const PURGED_CALLS: &str = "purged_calls";
/// `header`, and `e` then epoch (u32 BE) `-> slot`: the keyring, on PostgreSQL only (sled's store keeps
/// it in a file of its own, see `seal::keyring_home`).
pub(crate) const KEYRING: &str = "keyring";
/// `{callId}.{ext} -> sealed audio`: recordings, on PostgreSQL only (sled's store keeps them as files
/// under `{data_dir}/recordings`).
pub(crate) const RECORDINGS: &str = "recordings";
/// `name -> raw bytes`: process-wide settings such as the generated token secret.
pub(crate) const META: &str = "meta";

pub(crate) fn schema_version_key(schema_id: &str, version: u32) -> Vec<u8> {
    let mut key = Vec::with_capacity(schema_id.len() + 5);
    key.extend_from_slice(schema_id.as_bytes());
    key.push(0);
    key.extend_from_slice(&version.to_be_bytes());
    key
}
