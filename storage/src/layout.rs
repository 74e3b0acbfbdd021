//! The store's layout: which one-time conversions a store has been through. Each release reads and writes
//! one layout, [`STORE_LAYOUT`]; an older store is converted by `switchboard migrate` ([`Store::migrate`]),
//! an explicit step an operator runs with the servers stopped, never by an ordinary start, which refuses it
//! with nothing changed.
//!
//! Why no start converts: the conversion to layout 1 binds every security record to the master key (see
//! [`crate::seal::binding`]). Run at every opening of a store not yet bound, it let whoever could write the
//! store but lacked the key put back a keyring saved before that upgrade, add an operator token of their
//! choosing, and have the next start bind it. `migrate` still binds what it finds, but it says so, naming
//! every operator and every operator a token points to, for the operator who runs it to read.
//!
//! The layout is kept in the keyring's check value ([`crate::seal::Keyring::layout`]): only the master
//! key writes it, and it is read before anything else of the store, so a refusal changes nothing.
//!
//! Layouts:
//! - 0: a store of a release before binding: records plain, the audit chain unkeyed.
//! - 1: records and the audit chain's head bound to the master key.
//! - 2: the webhook secrets of accounts sealed, and every API secret stored as argon2id (earlier releases
//!   kept a bare SHA-256, or the secret itself in the clear).
//! - 3: on PostgreSQL, every request has its row in the `requests` table (sled has nothing to do).
//! - 4: the requests created before batches were stored whole keep their ids and are stored alone
//!   ([`crate::requests::alone`]): each batch of theirs gets a head in `intake` naming its members, the
//!   entries purges left behind go, and the `batch_index` tree they were listed by is emptied. Nothing
//!   reads that index any more.
//!
//! A store of the release before sealing (sled's files in the clear at the top of `data_dir`) is the
//! exception, as the operator contract asks: its first start seals it ([`crate::seal::seal_plaintext_store`])
//! and converts it straight to [`STORE_LAYOUT`], naming in the log the operators it bound. It holds no
//! keyring, so an attacker who writes one in place of a sealed store must delete the sealed store and its
//! keyring first: everything is lost, which no one can miss.

use std::path::Path;

use crate::engine::postgres::Pg;
use crate::engine::{Db, EngineChoice};
use crate::opening::{holds_plaintext_store, sled_dir};
use crate::seal::{Bound, Home, KeySource};
use crate::sealing::lease_alone;
use crate::{trees, StorageError, Store};

/// The layout this release reads and writes.
pub const STORE_LAYOUT: u32 = 4;

/// The first layout whose records are bound.
pub(crate) const BOUND: u32 = 1;

/// What an opening does with a store of another layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Opening {
    /// Refuse it (a new store is made at [`STORE_LAYOUT`]).
    Serve,
    /// Open it as it is, for [`Store::upgrade`].
    Migrate,
    /// Refuse it, and write nothing: a node standing by on a shared database.
    Standby,
}

/// What `switchboard migrate` did to a store.
#[derive(Debug, Default)]
pub struct Upgrade {
    /// The layout the store was at.
    pub from: u32,
    /// The layout it is at now ([`STORE_LAYOUT`]).
    pub to: u32,
    /// The records bound to the master key, when the store was at layout 0.
    pub bound: Option<Bound>,
    /// Accounts whose webhook secret was in the clear and is now sealed.
    pub secrets_sealed: u64,
    /// API secrets whose bare SHA-256 was replaced by argon2id over it.
    pub secrets_rehashed: u64,
    /// Requests given their row in PostgreSQL's `requests` table.
    pub requests_tabled: u64,
    /// Batches created before batches were stored whole, given a head naming their members.
    pub batches_named: u64,
    /// Listing and due entries of requests purged before, left behind, removed.
    pub stale_entries_removed: u64,
    /// What the opening sealed, when the store was of the release before sealing.
    pub plaintext: Option<crate::seal::Migrated>,
}

/// The refusal of a store at `found` by a start of this release; `place` names the store.
pub(crate) fn unconverted(found: u32, place: &str) -> StorageError {
    let text = if found > STORE_LAYOUT {
        format!(
            "the store {place} is at layout {found}, newer than this Switchboard's layout \
             {STORE_LAYOUT}: run the release that migrated it (nothing was changed)"
        )
    } else if found < BOUND {
        format!(
            "the store {place} holds security records not bound to the master key (a store of a \
             release before binding, or its keyring replaced by a copy from before that upgrade), and \
             no start binds them: stop every server, back up the store, and run `switchboard migrate \
             --config PATH`, which binds them and names every operator it binds (nothing was changed)"
        )
    } else {
        format!(
            "the store {place} is at layout {found} and this Switchboard needs layout \
             {STORE_LAYOUT}: stop every server, back up the store, and run `switchboard migrate \
             --config PATH` (nothing was changed)"
        )
    };
    StorageError::Unconverted(text)
}

impl Store {
    /// `switchboard migrate`: converts the store `engine` names (its keyring in `dir` on sled) to
    /// [`STORE_LAYOUT`]. No server may run while it converts: on sled the store's lock refuses one that
    /// does, on PostgreSQL the orchestrator lease (held until the conversion is done). Answers what it did, or
    /// `None` when there is no store yet (its first start makes one at this layout).
    pub async fn migrate(
        dir: &Path,
        cache_bytes: u64,
        key: &KeySource,
        engine: &EngineChoice,
    ) -> Result<Option<Upgrade>, StorageError> {
        let current = || {
            Ok(Some(Upgrade {
                from: STORE_LAYOUT,
                to: STORE_LAYOUT,
                ..Upgrade::default()
            }))
        };
        // A store at this layout needs nothing, and is not held meanwhile: a release that changes only the
        // PostgreSQL schema migrates while the nodes run.
        let lease = match engine {
            EngineChoice::Sled => {
                let home = Home::Dir(dir.to_path_buf());
                let plaintext = holds_plaintext_store(dir);
                match crate::opening::check_key(dir, &home, key)? {
                    None if !sled_dir(dir).exists() && !plaintext => return Ok(None),
                    Some(STORE_LAYOUT) if !plaintext => return current(),
                    _ => None,
                }
            }
            EngineChoice::Postgres { url, ca_file } => {
                let db = Db::Postgres(Pg::open(url, ca_file.as_deref())?);
                let home = Home::Database(db.open_tree(trees::KEYRING)?);
                match crate::opening::check_key(dir, &home, key)? {
                    None if !crate::store::holds_records(&db)? => return Ok(None),
                    Some(STORE_LAYOUT) => return current(),
                    _ => {}
                }
                let doing = "migrating the store";
                Some(lease_alone(url, ca_file.as_deref(), "migrate", doing)?)
            }
        };
        let fence = lease.as_ref().map(|lease| lease.holder());
        let (store, _) = Store::open_as(dir, cache_bytes, key, engine, fence, Opening::Migrate)
            .map_err(|e| match e {
                e if e.is_held_elsewhere() => StorageError::Keyring(format!(
                    "the store in {} is in use: stop the server before migrating it",
                    dir.display()
                )),
                other => other,
            })?;
        let mut upgrade = store.upgrade().await?;
        upgrade.plaintext = store.migrated().cloned();
        store.close()?;
        Ok(Some(upgrade))
    }

    /// Brings the store to [`STORE_LAYOUT`], one layout after the other, each step durable and marked in
    /// the keyring before the next: a migration stopped halfway resumes where it was.
    pub(crate) async fn upgrade(&self) -> Result<Upgrade, StorageError> {
        let mut upgrade = self.layout_of()?;
        if self.sealer.keyring.layout() < BOUND {
            upgrade.bound = Some(self.bind_records().await?);
            self.sealer.keyring.set_layout(BOUND)?;
        }
        if self.sealer.keyring.layout() < 2 {
            upgrade.secrets_sealed = self.seal_account_secrets().await?;
            upgrade.secrets_rehashed = self.hash_api_secrets().await?;
            self.flush_now()?;
            self.sealer.keyring.set_layout(2)?;
        }
        self.convert_requests(upgrade)
    }

    /// [`Store::upgrade`] of a new PostgreSQL database: it holds no account whose secrets need sealing,
    /// and no operator or setting to bind.
    pub(crate) fn upgrade_new_database(&self) -> Result<Upgrade, StorageError> {
        let mut upgrade = self.layout_of()?;
        if self.sealer.keyring.layout() < BOUND {
            upgrade.bound = Some(self.bind_new_records()?);
            self.sealer.keyring.set_layout(BOUND)?;
        }
        if self.sealer.keyring.layout() < 2 {
            self.sealer.keyring.set_layout(2)?;
        }
        self.convert_requests(upgrade)
    }

    /// What an upgrade of this store starts from; refused when its layout is newer than this release's.
    fn layout_of(&self) -> Result<Upgrade, StorageError> {
        let from = self.sealer.keyring.layout();
        if from > STORE_LAYOUT {
            return Err(unconverted(from, "here"));
        }
        Ok(Upgrade {
            from,
            to: STORE_LAYOUT,
            ..Upgrade::default()
        })
    }

    /// Layout 3: every request's row in the `requests` table (PostgreSQL); layout 4: the requests of the
    /// layout before batches were stored whole converted.
    fn convert_requests(&self, mut upgrade: Upgrade) -> Result<Upgrade, StorageError> {
        let keyring = &self.sealer.keyring;
        if keyring.layout() < 3 {
            upgrade.requests_tabled = self.fill_requests_table()?;
            keyring.set_layout(3)?;
        }
        if keyring.layout() < 4 {
            let converted = self.convert_layout_three()?;
            upgrade.batches_named = converted.batches;
            upgrade.stale_entries_removed = converted.stale_entries;
            keyring.set_layout(4)?;
        }
        Ok(upgrade)
    }
}

#[cfg(any(test, feature = "test-hooks"))]
impl Store {
    /// Test support: the keyring's check value as it was at `layout`, the keys unchanged, as whoever
    /// puts back a copy of the keyring saved before an upgrade makes it.
    pub fn keyring_at_layout_for_tests(&self, layout: u32) -> Result<(), StorageError> {
        self.sealer.keyring.set_layout(layout)
    }
}
