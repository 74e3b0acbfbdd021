//! Rotating the master key of a stopped store.

use std::path::Path;
use std::time::Duration;

use crate::engine::postgres::Pg;
use crate::engine::{Db, EngineChoice};
use crate::opening::{open_db_when_released, sled_dir, unlock};
use crate::seal::{Home, KeySource, Keyring, MasterKey};
use crate::{trees, LeaseHolder, NodeLease, StorageError, Store};

impl Store {
    /// Wraps every key of the stopped store in `dir` (on `engine`) under `new` instead of the key
    /// `current` names; afterwards `new` opens the store and the old key is refused. With sled it is
    /// refused while a server holds the store: sled's lock tells, and on PostgreSQL the orchestrator lease
    /// does (standbys hold nothing, but they too must be started again with the new key). Answers how many epoch keys were re-wrapped.
    pub fn rotate_master_key(
        dir: &Path,
        current: &KeySource,
        new: &MasterKey,
        engine: &EngineChoice,
    ) -> Result<usize, StorageError> {
        let EngineChoice::Postgres { url, ca_file } = engine else {
            return rotate_sled(dir, current, new);
        };
        // Held until the keyring is re-wrapped: no node runs meanwhile, and none can start.
        let lease = lease_alone(
            url,
            ca_file.as_deref(),
            "keys-rotate",
            "rotating the master key",
        )?;
        let db = Db::Postgres(Pg::open(url, ca_file.as_deref())?);
        // Should the lease be lost meanwhile, the node that took it keeps the keyring it read.
        db.fence_to(lease.holder());
        let home = Home::Database(db.open_tree(trees::KEYRING)?);
        if !Keyring::exists(&home)? {
            return Err(StorageError::Keyring(
                "the database holds no sealed store to rotate".into(),
            ));
        }
        let (old, _) = unlock(dir, &home, current)?;
        Keyring::rewrap(&home, &old, new)
    }
}

/// The orchestrator lease of the database at `url`, taken under the name `command` for work no node may
/// run beside (`doing`, for the refusal), or a refusal naming the node that holds it. A running node mints
/// the next hour's keys under the master key it was started with, so keys it wrote after a re-wrap would
/// open under neither key; a migration must see every record as it is.
pub(crate) fn lease_alone(
    url: &str,
    ca_file: Option<&Path>,
    command: &str,
    doing: &str,
) -> Result<NodeLease, StorageError> {
    let (url, ca_file) = (url.to_owned(), ca_file.map(Path::to_path_buf));
    let (command, doing) = (command.to_owned(), doing.to_owned());
    // A thread of its own: the caller may be on a runtime already, where another cannot be entered.
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| StorageError::Database(format!("cannot start a runtime: {e}")))?;
        runtime.block_on(async {
            let (holder_seen, mut holders) = tokio::sync::mpsc::unbounded_channel();
            let me = LeaseHolder {
                name: format!("{command}:{}", std::process::id()),
                node_url: None,
            };
            let watch = move |holder: Option<&LeaseHolder>| {
                if let Some(holder) = holder {
                    let _ = holder_seen.send(holder.name.clone());
                }
            };
            // The work lasts milliseconds to seconds: a renewal it misses changes nothing.
            let acquired = NodeLease::acquire(&url, ca_file.as_deref(), me, |_| false, watch, |_| {});
            tokio::select! {
                lease = acquired => lease,
                Some(holder) = holders.recv() => Err(StorageError::Keyring(format!(
                    "a node runs on this database (it holds the orchestrator lease as {holder}): stop \
                     every node before {doing}"
                ))),
            }
        })
    })
    .join()
    .unwrap_or_else(|_| Err(StorageError::Database("the lease thread panicked".into())))
}

fn rotate_sled(dir: &Path, current: &KeySource, new: &MasterKey) -> Result<usize, StorageError> {
    let home = Home::Dir(dir.to_path_buf());
    if !Keyring::exists(&home)? {
        return Err(StorageError::Keyring(format!(
            "{} holds no sealed store to rotate",
            dir.display()
        )));
    }
    let (old, _) = unlock(dir, &home, current)?;
    // Held while the keyring is rewritten, so no server can start on it meanwhile.
    let _held =
        open_db_when_released(&sled_dir(dir), 1 << 20, Duration::ZERO).map_err(|e| match e {
            StorageError::Engine(crate::error::EngineError(sled::Error::Io(io)))
                if io.to_string().contains("lock") =>
            {
                StorageError::Keyring(format!(
                    "the store in {} is in use: stop the server before rotating its key",
                    dir.display()
                ))
            }
            other => other,
        })?;
    Keyring::rewrap(&home, &old, new)
}
