//! Rotating the master key of a stopped store.

use std::path::Path;
use std::time::Duration;

use crate::engine::postgres::Pg;
use crate::engine::{Db, EngineChoice};
use crate::opening::{open_db_when_released, sled_dir, unlock};
use crate::seal::{Home, KeySource, Keyring, MasterKey};
use crate::{trees, StorageError, Store};

impl Store {
    /// Wraps every key of the stopped store in `dir` (on `engine`) under `new` instead of the key
    /// `current` names; afterwards `new` opens the store and the old key is refused. With sled it is
    /// refused while a server holds the store (sled's lock tells); with PostgreSQL every node must be
    /// stopped first. Answers how many epoch keys were re-wrapped.
    pub fn rotate_master_key(
        dir: &Path,
        current: &KeySource,
        new: &MasterKey,
        engine: &EngineChoice,
    ) -> Result<usize, StorageError> {
        let EngineChoice::Postgres { url, ca_file } = engine else {
            return rotate_sled(dir, current, new);
        };
        let db = Db::Postgres(Pg::open(url, ca_file.as_deref())?);
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
