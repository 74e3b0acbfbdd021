//! The [`Store`] handle: opening, durability and the trees. Operations live beside it, one file per kind.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::decoded::Decoded;
use crate::durability::{FlushStats, Flusher, Lane};
use crate::group::{GroupTrees, Job};
use crate::requests::IntakeRecord;
use crate::trees;
use crate::{AccountRecord, RequestRecord, SchemaVersionRecord, StorageError};

/// The page cache of [`Store::open`] and of a configuration that sets none: 16 MiB, where sled's default
/// is 1 GiB. sled's nodes in memory take about twice the bytes the cache counts: writing 1,000,000
/// requests, the server's resident memory reached 134 MiB with 16 MiB, 162 with 32 and 234 with 64, and no
/// benchmark figure (creates, reads, the 10,000-request burst) moved with it.
pub const DEFAULT_CACHE_BYTES: u64 = 16 << 20;

/// Requests kept decoded: a client polling its requests and the actors running them read the same record
/// again and again, but each one may be tens of kilobytes decoded, so far fewer than the other memos.
const DECODED_REQUESTS: usize = 1024;

/// Chunks of batches kept decoded (at most 64 requests each): a batch's members are read one after another
/// when its day comes.
pub(crate) const DECODED_CHUNKS: usize = 64;

/// Handle on the open store; cheap to clone, shared by every layer above.
#[derive(Clone)]
pub struct Store {
    db: sled::Db,
    pub(crate) accounts: sled::Tree,
    pub(crate) credential_keys: sled::Tree,
    pub(crate) schema_heads: sled::Tree,
    pub(crate) schema_versions: sled::Tree,
    pub(crate) payers: sled::Tree,
    pub(crate) delivery_attempts: sled::Tree,
    pub(crate) meta: sled::Tree,
    /// The request and delivery trees, which grouped writes touch (and writes that run alone, through
    /// [`GroupTrees::apply_one`]).
    pub(crate) group: GroupTrees,
    flusher: Arc<Flusher>,
    /// Signalled whenever a delivery is enqueued, so the webhook dispatcher wakes on work, not on a timer.
    outbox: Arc<tokio::sync::Notify>,
    pub(crate) decoded_accounts: Arc<Decoded<AccountRecord>>,
    pub(crate) decoded_schema_versions: Arc<Decoded<SchemaVersionRecord>>,
    pub(crate) decoded_requests: Arc<Decoded<RequestRecord>>,
    /// Batches stored whole, decoded: a batch's members are read one after another when its day comes.
    pub(crate) decoded_intake: Arc<Decoded<IntakeRecord>>,
}

impl Store {
    /// Opens (or creates) the store in `dir` with a page cache of [`DEFAULT_CACHE_BYTES`]. Fails if another
    /// handle holds it for longer than two seconds (handles this process just dropped are waited for).
    pub fn open(dir: &Path) -> Result<Store, StorageError> {
        Store::open_with_cache(dir, DEFAULT_CACHE_BYTES)
    }

    /// Opens (or creates) the store in `dir`, its page cache bounded to `cache_bytes`.
    pub fn open_with_cache(dir: &Path, cache_bytes: u64) -> Result<Store, StorageError> {
        let db = open_db_when_released(dir, cache_bytes, RELEASE_WAIT)?;
        let group = GroupTrees::open(&db)?;
        Ok(Store {
            accounts: db.open_tree(trees::ACCOUNTS)?,
            credential_keys: db.open_tree(trees::CREDENTIAL_KEYS)?,
            schema_heads: db.open_tree(trees::SCHEMA_HEADS)?,
            schema_versions: db.open_tree(trees::SCHEMA_VERSIONS)?,
            payers: db.open_tree(trees::PAYERS)?,
            delivery_attempts: db.open_tree(trees::DELIVERY_ATTEMPTS)?,
            meta: db.open_tree(trees::META)?,
            flusher: Arc::new(Flusher::start(db.clone(), group.clone())),
            outbox: Arc::new(tokio::sync::Notify::new()),
            decoded_accounts: Arc::new(Decoded::new()),
            decoded_schema_versions: Arc::new(Decoded::new()),
            decoded_requests: Arc::new(Decoded::with_capacity(DECODED_REQUESTS)),
            decoded_intake: Arc::new(Decoded::with_capacity(DECODED_CHUNKS)),
            group,
            db,
        })
    }

    /// Waits until every write made before the call is on disk.
    pub async fn durable(&self) -> Result<(), StorageError> {
        self.flusher.durable().await
    }

    /// Waits until every grouped write that can be read now is on disk: cheaper than [`Store::durable`]
    /// for a reader that found a grouped write, such as a delivery, and must not act on it before it is
    /// durable.
    pub async fn groups_durable(&self) -> Result<(), StorageError> {
        self.flusher.groups_durable().await
    }

    /// Queues a grouped write (see [`crate::group`]).
    pub(crate) fn submit(&self, job: Box<dyn Job>, lane: Lane) {
        self.flusher.submit(job, lane);
    }

    /// Opens the store in `dir` once more and closes it, for the end of a graceful shutdown. sled 0.34
    /// writes the snapshot of its page table only when it opens a store, so without this the next start
    /// replays everything this run wrote: 0.9 s with 1,000,000 stored requests. Opening now pays that
    /// replay while stopping and leaves a snapshot for the next start to begin from.
    ///
    /// sled refuses a second opening while a handle on the store lives, and threads that held one may
    /// still be ending: a refusal is retried for up to `wait`.
    pub fn write_recovery_snapshot(
        dir: &Path,
        cache_bytes: u64,
        wait: Duration,
    ) -> Result<(), StorageError> {
        open_db_when_released(dir, cache_bytes, wait)?.flush()?;
        Ok(())
    }

    /// Flushes everything and stops the flusher; used at graceful shutdown.
    pub fn close(&self) -> Result<(), StorageError> {
        let result = self.flusher.durable_blocking();
        self.flusher.shutdown();
        result.or_else(|e| match e {
            StorageError::Closed => Ok(()),
            other => Err(other),
        })
    }

    /// Waits until a delivery is enqueued after the previous wait returned (or, the first time, since the
    /// store was opened). Signals coalesce: one wake-up may stand for many deliveries.
    pub async fn outbox_enqueued(&self) {
        self.outbox.notified().await;
    }

    pub(crate) fn signal_outbox(&self) {
        self.outbox.notify_one();
    }

    /// Flush counters, for metrics.
    pub fn flush_stats(&self) -> FlushStats {
        self.flusher.stats()
    }

    /// The flush-latency histogram (`switchboard_store_flush_duration_seconds`), to register with a metrics
    /// registry. It is a handle: clones observe the same flushes.
    pub fn flush_latency(&self) -> prometheus::Histogram {
        self.flusher.latency()
    }

    /// The histogram of writes per grouped transaction (`switchboard_store_group_writes`), to register
    /// with a metrics registry; a handle like [`Store::flush_latency`].
    pub fn group_sizes(&self) -> prometheus::Histogram {
        self.flusher.group_sizes()
    }

    /// A unique, increasing number (sled's id generator); used to order log entries.
    pub fn generate_id(&self) -> Result<u64, StorageError> {
        Ok(self.db.generate_id()?)
    }

    /// Bytes the store occupies on disk.
    pub fn size_on_disk(&self) -> Result<u64, StorageError> {
        Ok(self.db.size_on_disk()?)
    }
}

/// Opens sled the one way every opening of the store does. Our flusher is the only one: sled's periodic
/// flush would add fsyncs without acknowledging anything.
fn open_db(dir: &Path, cache_bytes: u64) -> Result<sled::Db, StorageError> {
    discard_unfinished_snapshots(dir)?;
    Ok(sled::Config::new()
        .path(dir)
        .flush_every_ms(None)
        .cache_capacity(cache_bytes)
        .open()?)
}

/// Removes the snapshot files sled had not finished writing. sled 0.34 writes `snap.<lsn>.generating`,
/// syncs it and renames it, and it removes older snapshots only after the rename; but when it opens a
/// store it reads the highest-sorting `snap.` file, unfinished ones included, and refuses a torn one as
/// corruption. A process killed while opening (or while stopping, which opens the store once more) would
/// leave a store that no longer opens.
fn discard_unfinished_snapshots(dir: &Path) -> Result<(), StorageError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(sled::Error::from(e).into()),
    };
    for entry in entries {
        let entry = entry.map_err(sled::Error::from)?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("snap.") && name.ends_with(".generating") {
            tracing::warn!(file = %name, "removing a snapshot file left unfinished");
            std::fs::remove_file(entry.path()).map_err(sled::Error::from)?;
        }
    }
    Ok(())
}

/// sled's refusal to open a store another handle holds. Its lock error carries no kind of its own, so
/// this reads the message of the pinned sled 0.34.
/// How long an opening waits for handles a closed store left to be released: sled's I/O threads drop
/// theirs a moment after the last handle of this process goes, and a store closed and opened again in one
/// process (a restart in tests, the recovery snapshot) would otherwise be refused now and then.
pub(crate) const RELEASE_WAIT: Duration = Duration::from_secs(2);

/// Opens sled in `dir`, retrying a refusal for a lock another handle holds for up to `wait`.
fn open_db_when_released(
    dir: &Path,
    cache_bytes: u64,
    wait: Duration,
) -> Result<sled::Db, StorageError> {
    let deadline = Instant::now() + wait;
    loop {
        match open_db(dir, cache_bytes) {
            Err(StorageError::Engine(sled::Error::Io(e)))
                if is_lock_refusal(&e) && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            opened => return opened,
        }
    }
}

fn is_lock_refusal(error: &std::io::Error) -> bool {
    error.to_string().contains("could not acquire lock")
}

/// Visibility flags of a schema.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchemaFlags {
    /// Gone for detail and creation.
    pub retired: bool,
    /// Gone from the list only.
    pub hidden: bool,
}

/// When [`Store::publish_schema`] writes a new version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PublishRule {
    /// Every call publishes (the admin API).
    Always {
        /// Version number of a brand-new schema.
        first_version: u32,
    },
    /// Only a change publishes (start-up provisioning from config, so restarts don't bump versions).
    IfChanged {
        /// Version number of a brand-new schema, or the floor for the next one.
        first_version: u32,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_opening_waits_for_the_handle_that_holds_the_store_to_be_released() {
        let dir = tempfile::tempdir().unwrap();
        let held = Store::open(dir.path()).unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            held.close().unwrap();
            drop(held);
        });
        let started = Instant::now();
        let store = Store::open(dir.path()).expect("opens once the other handle is released");
        assert!(started.elapsed() >= Duration::from_millis(300));
        release.join().unwrap();
        store.close().unwrap();
    }
}
