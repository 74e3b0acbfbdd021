//! Switchboard's durable store.
//!
//! This crate owns persistence: the sled trees, the record types written into them, how keys are encoded,
//! which writes are atomic together, and when a write counts as durable. It knows nothing of actix, HTTP
//! or the JSON wire format; callers above see typed records and [`StorageError`], never a sled type, so the
//! engine could be replaced without touching them.
//!
//! Durability: sled's own background flush is switched off. A mutating call either writes, then waits on
//! the [`durability`] group-commit flusher for a flush that *began after* the write, or (the hot writes:
//! creates, request transitions, webhook saves) is queued as a [`group`] write that the flusher applies
//! with every other write waiting, in one transaction, before its next flush. Either way an `Ok` means the
//! change is on disk, and concurrent writers share one `fsync`.
#![warn(missing_docs)]

mod account_secrets;
mod accounts;
mod api_secrets;
pub mod audit;
mod audited;
mod backup;
mod codec;
mod current;
mod decoded;
mod deliveries;
mod due_work;
mod durability;
mod engine;
mod error;
mod group;
mod ids;
mod layout;
mod meta;
mod opening;
mod operators;
mod outbox;
mod payer_stats;
mod payers;
pub mod private_files;
mod purge;
mod recordings;
pub mod records;
mod requests;
mod runs;
mod schemas;
pub mod seal;
mod sealing;
mod storage_config;
mod store;
mod tasks;
mod trees;

pub use api_secrets::{api_secret_matches, hash_api_secret};
pub use backup::Backup;
pub use deliveries::QueuePosition;
pub use durability::FlushStats;
pub use engine::lease::{LeaseHolder, NodeLease, FENCE_AFTER, LEASE_TTL};
pub use engine::operations::AttemptEntry;
pub use engine::postgres::{
    migrate as migrate_postgres, SCHEMA_VERSION as POSTGRES_SCHEMA_VERSION,
};
/// The answer of a store's read on a path that cannot await (an actor's handler): at once on sled; on
/// PostgreSQL the thread waits for the round trip.
#[cfg(any(test, feature = "test-hooks"))]
pub use engine::testing::{
    admin_query, empty_postgres_database, fresh_postgres_database, TestEngine,
    POSTGRES_URL_VARIABLE,
};
pub use engine::EngineChoice;
pub use error::{EngineError, StorageError};
pub use ids::{mint_request_ids, CallId, RequestBatchId, RequestId, StepKey, BATCH_CAPACITY};
pub use layout::{Upgrade, STORE_LAYOUT};
pub use opening::{sled_dir, STORE_DIR};
pub use payer_stats::KEPT_DAYS as PAYER_STATS_KEPT_DAYS;
pub use purge::Purged;
pub use records::*;
pub use requests::{Cursor, Scope};
pub use runs::DueEntry;
pub use storage_config::StorageConfig;
pub use store::{PublishRule, SchemaFlags, Store, DEFAULT_CACHE_BYTES};
pub use tasks::{task_of, TaskEntries};
