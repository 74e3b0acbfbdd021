//! Opening a store: the master key is checked against the keyring before sled is touched (and with it the
//! store's layout, [`crate::layout`]), a store of the plaintext layout is rewritten sealed, and sled's own
//! opening quirks are handled.
//!
//! Layout of `data_dir`: `keyring` (the wrapped keys), `store/` (sled), `recordings/` (sealed files) and,
//! when the operator names no key, `master.key`. Releases before sealing kept sled's files directly in
//! `data_dir`, in the clear; [`crate::seal`]'s migration turns them into `store/`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::seal::{Home, KeySource, Keyring, MasterKey};
use crate::StorageError;

/// sled's directory inside `data_dir`.
pub const STORE_DIR: &str = "store";

/// Where sled keeps a store in `dir`.
pub fn sled_dir(dir: &Path) -> PathBuf {
    dir.join(STORE_DIR)
}

/// Whether `dir` holds a store of the layout before sealing: sled's files at its top level.
pub(crate) fn holds_plaintext_store(dir: &Path) -> bool {
    dir.join("db").is_file() && dir.join("conf").is_file()
}

/// The master key of the store whose keyring is in `home`, checked against that keyring; a store without
/// one (new, or of the plaintext layout) gets a keyring. A key kept beside the data is in `dir`. Nothing is
/// written before the key is known to be right: a wrong key is refused, and a missing one too when the
/// store is already sealed.
pub(crate) fn unlock(
    dir: &Path,
    home: &Home,
    source: &KeySource,
) -> Result<(MasterKey, Keyring), StorageError> {
    let sealed = Keyring::exists(home)?;
    let (key, generate) = match source {
        KeySource::Given { key, .. } => (key.clone(), false),
        KeySource::BesideData => {
            let path = KeySource::beside_data_path(dir);
            if path.exists() {
                (MasterKey::read_file(&path)?, false)
            } else if sealed {
                return Err(StorageError::KeyMissing(dir.to_path_buf()));
            } else {
                (MasterKey::generate(), true)
            }
        }
    };
    if sealed {
        let keyring = Keyring::open(home, &key)?;
        return Ok((key, keyring));
    }
    crate::private_files::create_dir_all(dir)
        .map_err(|e| StorageError::Keyring(format!("cannot create {}: {e}", dir.display())))?;
    if generate {
        key.write_new_file(&KeySource::beside_data_path(dir))?;
    }
    let keyring = Keyring::create(home, &key)?;
    Ok((key, keyring))
}

/// Checks, writing nothing, that `source` opens the keyring in `home`: `Ok(None)` while there is no
/// keyring yet (the first opening creates it), the store's layout when the key opens it, and the
/// opening's own refusal (a wrong key, a missing one) otherwise.
pub(crate) fn check_key(
    dir: &Path,
    home: &Home,
    source: &KeySource,
) -> Result<Option<u32>, StorageError> {
    if !Keyring::exists(home)? {
        return Ok(None);
    }
    let key = match source {
        KeySource::Given { key, .. } => key.clone(),
        KeySource::BesideData => {
            let path = KeySource::beside_data_path(dir);
            if !path.exists() {
                return Err(StorageError::KeyMissing(dir.to_path_buf()));
            }
            MasterKey::read_file(&path)?
        }
    };
    Ok(Some(Keyring::open(home, &key)?.layout()))
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

/// How long an opening waits for handles a closed store left to be released: sled's I/O threads drop
/// theirs a moment after the last handle of this process goes, and a store closed and opened again in one
/// process (a restart in tests, the recovery snapshot) would otherwise be refused now and then.
pub(crate) const RELEASE_WAIT: Duration = Duration::from_secs(2);

/// Opens sled in `dir`, retrying a refusal for a lock another handle holds for up to `wait`.
pub(crate) fn open_db_when_released(
    dir: &Path,
    cache_bytes: u64,
    wait: Duration,
) -> Result<sled::Db, StorageError> {
    let deadline = Instant::now() + wait;
    loop {
        match open_db(dir, cache_bytes) {
            Err(StorageError::Engine(crate::error::EngineError(sled::Error::Io(e))))
                if is_lock_refusal(&e) && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            opened => return opened,
        }
    }
}

/// sled's refusal to open a store another handle holds. Its lock error carries no kind of its own, so
/// this reads the message of the pinned sled 0.34.
pub(crate) fn is_lock_refusal(error: &std::io::Error) -> bool {
    error.to_string().contains("could not acquire lock")
}
