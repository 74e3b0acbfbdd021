//! The [`Store`] handle: opening, durability and the trees. Operations live beside it, one file per kind.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::codec::Storing;
use crate::current::Current;
use crate::decoded::Decoded;
use crate::durability::{FlushStats, Flusher, Lane};
use crate::engine::postgres::Pg;
use crate::engine::{Db, EngineChoice};
use crate::group::{GroupTrees, Job};
use crate::layout::{unconverted, Opening, Upgrade, STORE_LAYOUT};
use crate::opening::{
    holds_plaintext_store, open_db_when_released, sled_dir, unlock, RELEASE_WAIT,
};
use crate::outbox::Outbox;
use crate::recordings::{recordings_dir, Recordings};
use crate::requests::IntakeRecord;
use crate::seal::{Home, KeySource, Keyring, Migrated, Sealed, Sealer};
use crate::trees;
use crate::{
    AccountRecord, PayerRecord, RequestRecord, SchemaHeadRecord, SchemaVersionRecord, StorageError,
};

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
    pub(crate) db: Db,
    pub(crate) accounts: crate::engine::Tree,
    pub(crate) credential_keys: crate::engine::Tree,
    pub(crate) schema_heads: crate::engine::Tree,
    pub(crate) schema_versions: crate::engine::Tree,
    pub(crate) payers: crate::engine::Tree,
    pub(crate) delivery_attempts: crate::engine::Tree,
    pub(crate) meta: crate::engine::Tree,
    /// The audit log (also reachable through `group`, which appends to it).
    pub(crate) audit: crate::engine::Tree,
    pub(crate) operators: crate::engine::Tree,
    pub(crate) data_keys: crate::engine::Tree,
    pub(crate) shreds: crate::engine::Tree,
    pub(crate) purged_calls: crate::engine::Tree,
    pub(crate) operator_tokens: crate::engine::Tree,
    /// The request and delivery trees, which grouped writes touch (and writes that run alone, through
    /// [`GroupTrees::apply_one`]).
    pub(crate) group: GroupTrees,
    flusher: Arc<Flusher>,
    /// The first webhook rounds not yet durable, and the signal that wakes the dispatcher when one becomes
    /// durable, so it wakes on work, not on a timer.
    pub(crate) outbox: Arc<Outbox>,
    pub(crate) decoded_accounts: Arc<Decoded<AccountRecord>>,
    /// Accounts as last read, until the next account write.
    pub(crate) current_accounts: Arc<Current<AccountRecord>>,
    /// Schema heads and versions as last read, until the next schema write: a create and a request's
    /// run read them, and on PostgreSQL each read would be a round trip.
    pub(crate) current_schema_heads: Arc<Current<SchemaHeadRecord>>,
    pub(crate) current_schema_versions: Arc<Current<SchemaVersionRecord>>,
    /// Payer directory entries as last read, until the next payer write: every real call's hours.
    pub(crate) current_payers: Arc<Current<PayerRecord>>,
    pub(crate) decoded_requests: Arc<Decoded<RequestRecord>>,
    /// Batches stored whole, decoded: a batch's members are read one after another when its day comes.
    pub(crate) decoded_intake: Arc<Decoded<IntakeRecord>>,
    /// How deliveries are stored: sealed (their payload and signing secret).
    pub(crate) deliveries: Storing,
    /// Seals and opens what carries request data.
    pub(crate) sealer: Arc<Sealer>,
    /// Where recordings are kept.
    pub(crate) recordings: Recordings,
    /// What the opening found to seal in a store of the plaintext layout.
    migrated: Option<Arc<Migrated>>,
}

impl Store {
    /// Opens (or creates) the store `config` names: the only way to open one. A key that does not open
    /// it fails the opening before anything in `config.dir` is written; a store of the plaintext layout
    /// is sealed first ([`Store::migrated`]); a store of an earlier layout is refused, naming `switchboard
    /// migrate`. A sled store another handle holds for more than two seconds fails (handles this process
    /// just dropped are waited for).
    pub fn open(config: &crate::StorageConfig) -> Result<Store, StorageError> {
        if config.standby {
            return Store::open_standby(config);
        }
        Store::open_fenced(
            &config.dir,
            config.cache_bytes,
            &config.key,
            &config.engine,
            config.holder.as_deref(),
        )
    }

    /// Checks, writing nothing, that `key` opens the store `engine` names (the keyring in `dir` on sled,
    /// the database's on PostgreSQL) and that the store is at this release's layout, or holds no data
    /// yet: what a node does before it serves anything, standing by included, so that a node that could
    /// never open the store never forwards, waits or takes the lease. `Ok(false)` while the store has no
    /// keyring yet: its first opening makes one.
    pub fn check_key(
        dir: &Path,
        key: &KeySource,
        engine: &EngineChoice,
    ) -> Result<bool, StorageError> {
        let (layout, held_data, place) = match engine {
            EngineChoice::Sled => (
                crate::opening::check_key(dir, &Home::Dir(dir.to_path_buf()), key)?,
                sled_dir(dir).exists(),
                format!("in {}", dir.display()),
            ),
            EngineChoice::Postgres { url, ca_file } => {
                let db = Db::Postgres(Pg::open(url, ca_file.as_deref())?);
                let home = Home::Database(db.open_tree(trees::KEYRING)?);
                let layout = crate::opening::check_key(dir, &home, key)?;
                (layout, holds_records(&db)?, "in the database".to_owned())
            }
        };
        match layout {
            Some(layout) if held_data && layout != STORE_LAYOUT => Err(unconverted(layout, &place)),
            found => Ok(found.is_some()),
        }
    }

    /// [`crate::StorageConfig::standby`]: only on PostgreSQL, on a database whose keyring exists (its first
    /// holder makes it), with nothing written by the opening.
    fn open_standby(config: &crate::StorageConfig) -> Result<Store, StorageError> {
        let EngineChoice::Postgres { .. } = &config.engine else {
            return Err(StorageError::Keyring(
                "only a store on a shared PostgreSQL database is opened standing by".into(),
            ));
        };
        let (store, _) = Store::open_as(
            &config.dir,
            config.cache_bytes,
            &config.key,
            &config.engine,
            None,
            Opening::Standby,
        )?;
        Ok(store)
    }

    fn open_fenced(
        dir: &Path,
        cache_bytes: u64,
        key: &KeySource,
        engine: &EngineChoice,
        fence: Option<&str>,
    ) -> Result<Store, StorageError> {
        let (store, fresh) = Store::open_as(dir, cache_bytes, key, engine, fence, Opening::Serve)?;
        if fresh {
            // A new store (or one of the release before sealing, sealed just now) is made at this
            // release's layout: nothing of an earlier one to keep apart.
            let upgrade = match &store.db {
                Db::Postgres(_) => store.upgrade_new_database()?,
                // A store of the release before sealing, sealed just now: its accounts are converted
                // too. sled answers every operation at its first poll, so this opening, which may run
                // on any thread, needs no runtime.
                Db::Sled(_) => {
                    futures::FutureExt::now_or_never(store.upgrade()).ok_or_else(|| {
                        StorageError::Keyring("the first layout conversion waited on sled".into())
                    })??
                }
            };
            store.log_first_start(upgrade);
        }
        Ok(store)
    }

    /// Opens the store for `opening`, and answers whether it held no data before this opening (a store of
    /// the release before sealing, copied into a sealed one now, counts as holding none: its keyring is
    /// new). A [`Opening::Serve`] refuses a store that holds data at another layout than
    /// [`STORE_LAYOUT`], before anything is written.
    pub(crate) fn open_as(
        dir: &Path,
        cache_bytes: u64,
        key: &KeySource,
        engine: &EngineChoice,
        fence: Option<&str>,
        opening: Opening,
    ) -> Result<(Store, bool), StorageError> {
        let (db, sealer, migrated, held_data) = match engine {
            EngineChoice::Sled => {
                let home = Home::Dir(dir.to_path_buf());
                let held_data = sled_dir(dir).exists();
                // A keyring made now for a store that holds data would vouch for whatever the store
                // holds, records forged by whoever removed the keyring included.
                if !Keyring::exists(&home)? && held_data {
                    return Err(keyring_gone());
                }
                let (_, keyring) = unlock(dir, &home, key)?;
                if held_data && opening == Opening::Serve && keyring.layout() != STORE_LAYOUT {
                    return Err(unconverted(
                        keyring.layout(),
                        &format!("in {}", dir.display()),
                    ));
                }
                if !held_data && keyring.bound() && holds_plaintext_store(dir) {
                    return Err(plaintext_beside_a_later_keyring());
                }
                let sealer = Arc::new(Sealer::new(keyring));
                let migrated = crate::seal::seal_plaintext_store(dir, &sealer, cache_bytes)?;
                let db = open_db_when_released(&sled_dir(dir), cache_bytes, RELEASE_WAIT)?;
                (Db::Sled(db), sealer, migrated.map(Arc::new), held_data)
            }
            EngineChoice::Postgres { url, ca_file } => {
                let db = Db::Postgres(Pg::open(url, ca_file.as_deref())?);
                if let Some(holder) = fence {
                    db.fence_to(holder);
                }
                let home = Home::Database(db.open_tree(trees::KEYRING)?);
                if opening == Opening::Standby && !Keyring::exists(&home)? {
                    return Err(StorageError::Keyring(
                        "the database has no keyring yet: its first holder makes it".into(),
                    ));
                }
                let held_data = holds_records(&db)?;
                if !Keyring::exists(&home)? && held_data {
                    return Err(keyring_gone());
                }
                let (_, keyring) = unlock(dir, &home, key)?;
                if held_data && opening != Opening::Migrate && keyring.layout() != STORE_LAYOUT {
                    return Err(unconverted(keyring.layout(), "in the database"));
                }
                (db, Arc::new(Sealer::new(keyring)), None, held_data)
            }
        };
        sealer
            .overrides
            .load(&db.open_tree(trees::DATA_KEYS)?, &sealer.keyring)?;
        let standby = opening == Opening::Standby;
        if standby {
            // The holder's purges replace keys this node just read.
            sealer.follow(db.open_tree(trees::DATA_KEYS)?);
        }
        let group = GroupTrees::open(&db, Arc::clone(&sealer))?;
        if standby {
            group.chain.read_tip_always();
        }
        if !db.commits_are_durable() {
            group
                .chain
                .keep_read_journal(&sled_dir(dir), &group.audit, &db)?;
        }
        group
            .chain
            .keep_mark(dir, &group.audit, matches!(db, Db::Sled(_)))?;
        let recordings = match &db {
            Db::Sled(_) => Recordings::Files(recordings_dir(dir)),
            Db::Postgres(_) => Recordings::Rows(db.open_tree(trees::RECORDINGS)?),
        };
        let sealed = |tree| Storing::Sealed(Arc::clone(&sealer), tree);
        let store = Store {
            accounts: db.open_tree(trees::ACCOUNTS)?,
            credential_keys: db.open_tree(trees::CREDENTIAL_KEYS)?,
            schema_heads: db.open_tree(trees::SCHEMA_HEADS)?,
            schema_versions: db.open_tree(trees::SCHEMA_VERSIONS)?,
            payers: db.open_tree(trees::PAYERS)?,
            delivery_attempts: db.open_tree(trees::DELIVERY_ATTEMPTS)?,
            meta: db.open_tree(trees::META)?,
            audit: group.audit.clone(),
            operators: db.open_tree(trees::OPERATORS)?,
            data_keys: db.open_tree(trees::DATA_KEYS)?,
            shreds: db.open_tree(trees::SHREDS)?,
            purged_calls: db.open_tree(trees::PURGED_CALLS)?,
            operator_tokens: db.open_tree(trees::OPERATOR_TOKENS)?,
            flusher: Arc::new(Flusher::start(db.clone(), group.clone())),
            outbox: Arc::new(Outbox::default()),
            decoded_accounts: Arc::new(Decoded::new()),
            current_accounts: Arc::new(Current::keeping(!standby)),
            current_schema_heads: Arc::new(Current::keeping(!standby)),
            current_schema_versions: Arc::new(Current::keeping(!standby)),
            current_payers: Arc::new(Current::keeping(!standby)),
            decoded_requests: Arc::new(Decoded::with_capacity(
                DECODED_REQUESTS,
                sealed(Sealed::Requests),
            )),
            decoded_intake: Arc::new(Decoded::with_capacity(
                DECODED_CHUNKS,
                sealed(Sealed::Intake),
            )),
            deliveries: sealed(Sealed::Deliveries),
            sealer,
            migrated,
            recordings,
            group,
            db,
        };
        // A purge a crash interrupted replaces its keys before anything else is read; by the holder, as
        // every write is.
        if !standby {
            store.complete_shreds()?;
        }
        // Last, once the opening has created everything it creates (sled's files, the read journal).
        crate::private_files::restrict_data_dir(dir);
        Ok((store, !held_data))
    }

    /// Logs what the first start of a store did beyond making it: the sealing of a store of the release
    /// before sealing, and the records it bound, the operators named.
    fn log_first_start(&self, upgrade: Upgrade) {
        let Some(migrated) = self.migrated() else {
            return;
        };
        let bound = upgrade.bound.unwrap_or_default();
        tracing::warn!(
            sealed = migrated.sealed,
            hashed = migrated.hashed,
            copied = migrated.copied,
            recordings = migrated.recordings,
            operators = %bound.operators.join(", "),
            token_holders = %bound.token_holders.join(", "),
            "the plaintext store of an earlier release was copied into a sealed one and removed, its \
             security records bound to the master key: check that the operators named are yours"
        );
    }

    /// What opening this store sealed, when it was of the plaintext layout.
    pub(crate) fn migrated(&self) -> Option<&Migrated> {
        self.migrated.as_deref()
    }

    /// Commits from now on only while this process holds the orchestrator lease under the name `holder`
    /// ([`crate::NodeLease::holder`]): a node that lost the lease unawares (it stalled past its expiry)
    /// has its transactions refused instead of writing beside the node that took over. Only PostgreSQL's
    /// stores are shared; on sled this does nothing. For tests: a node opens its store already fenced
    /// ([`crate::StorageConfig::leased`]).
    #[cfg(test)]
    pub(crate) fn fence_to(&self, holder: &str) {
        self.db.fence_to(holder);
    }

    /// Waits until every write made before the call is on disk: how a write made alone becomes durable
    /// before its operation returns. Grouped writes are durable when their answer arrives.
    pub(crate) async fn durable(&self) -> Result<(), StorageError> {
        self.flusher.durable().await
    }

    /// Waits until every grouped write that can be read now is on disk: cheaper than [`Store::durable`]
    /// for a reader that found a grouped write and must not answer with it before it is durable.
    pub(crate) async fn groups_durable(&self) -> Result<(), StorageError> {
        self.flusher.groups_durable().await
    }

    /// Whether the last flush failed: what was written since the last good one may not be on disk.
    pub(crate) fn flush_failing(&self) -> bool {
        self.flusher.failing()
    }

    /// Queues a grouped write (see [`crate::group`]).
    pub(crate) fn submit(&self, job: Box<dyn Job>, lane: Lane) {
        self.flusher.submit(job, lane);
    }

    /// At the end of a graceful shutdown, once every handle is dropped: leaves what makes the engine's
    /// next start quick, and answers whether there was anything to do. On sled the store in `dir` is
    /// opened once more and closed: sled 0.34 writes the snapshot of its page table only when it opens a
    /// store, so without this the next start replays everything this run wrote (0.9 s with 1,000,000
    /// stored requests); opening now pays that replay while stopping. PostgreSQL has nothing to do.
    ///
    /// sled refuses a second opening while a handle on the store lives, and threads that held one may
    /// still be ending: a refusal is retried for up to `wait`.
    pub fn prepare_next_start(
        engine: &EngineChoice,
        dir: &Path,
        cache_bytes: u64,
        wait: Duration,
    ) -> Result<bool, StorageError> {
        match engine {
            EngineChoice::Sled => {
                open_db_when_released(&sled_dir(dir), cache_bytes, wait)?.flush()?;
                // The snapshot sled just wrote, and any it wrote while serving.
                crate::private_files::restrict_data_dir(dir);
                Ok(true)
            }
            EngineChoice::Postgres { .. } => Ok(false),
        }
    }

    /// Flushes sled on this thread (a backup holding the write gate: no group can run meanwhile).
    pub(crate) fn flush_now(&self) -> Result<(), StorageError> {
        self.db.flush()?;
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

    /// Waits until the outbox may hold a round to hand out that it did not at the previous wait (or, the
    /// first time, since the store was opened): a first round became durable, or a delivery was queued.
    /// Signals coalesce: one wake-up may stand for many deliveries.
    pub async fn outbox_enqueued(&self) {
        self.outbox.signalled().await;
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
}

/// The refusal to open a store whose keyring is gone while its records are not.
fn keyring_gone() -> StorageError {
    StorageError::Keyring(
        "the store holds data but its keyring is missing: restore the keyring (or the whole data \
         directory) from a backup; a new keyring would vouch for records nobody can check"
            .into(),
    )
}

/// The refusal to seal a store of the release before sealing where a later release's keyring says its
/// own store was bound: that store is gone, and the plaintext one was put in its place.
fn plaintext_beside_a_later_keyring() -> StorageError {
    StorageError::Keyring(
        "data_dir holds a store of the release before sealing beside the keyring of a sealed store \
         that is gone: restore the data directory from a backup (nothing was changed)"
            .into(),
    )
}

/// Whether the database holds any record a keyring would have to vouch for.
pub(crate) fn holds_records(db: &Db) -> Result<bool, StorageError> {
    // On PostgreSQL, the families kept in tables of their own; their trees are empty there.
    if let Db::Postgres(pg) = db {
        if pg.tables_hold_records()? {
            return Ok(true);
        }
    }
    for name in [trees::AUDIT, trees::OPERATORS, trees::ACCOUNTS, trees::META] {
        if !db.open_tree(name)?.is_empty()? {
            return Ok(true);
        }
    }
    Ok(false)
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
    use std::time::Instant;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_opening_waits_for_the_handle_that_holds_the_store_to_be_released() {
        let dir = tempfile::tempdir().unwrap();
        let held = Store::open(&crate::StorageConfig::embedded(dir.path())).unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            held.close().unwrap();
            drop(held);
        });
        let started = Instant::now();
        let store = Store::open(&crate::StorageConfig::embedded(dir.path()))
            .expect("opens once the other handle is released");
        assert!(started.elapsed() >= Duration::from_millis(300));
        release.join().unwrap();
        store.close().unwrap();
    }
}
