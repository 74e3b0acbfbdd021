//! Sealing a store written before sealing existed: its sled files sit in the clear at the top of
//! `data_dir`. They are copied into a new sled store (`store/`), every value that carries request data
//! sealed and every `internalId` key replaced by its keyed hash, then removed.
//!
//! A copy rather than a rewrite in place: sled keeps superseded values in its log until it reuses the
//! segment, so sealing values where they lie would leave the plaintext readable in the files. The new store
//! has never held a plaintext byte, and the old files go whole.
//!
//! Crash safety: the copy is built under `store.sealing/` and renamed to `store/` only once it is flushed;
//! the plaintext files are removed after the rename. A crash before the rename starts the copy over; one
//! after it finds `store/` and finishes the removal.

use std::path::Path;

use super::{is_sealed, Sealed, Sealer};
use crate::opening::{holds_plaintext_store, open_db_when_released, sled_dir, RELEASE_WAIT};
use crate::{trees, StorageError};

/// The directory the copy is built in.
const BUILDING: &str = "store.sealing";
/// Entries written per batch of the copy.
const BATCH: usize = 10_000;

/// What a migration did, for the start-up log.
#[derive(Clone, Debug, Default)]
pub struct Migrated {
    /// Values sealed.
    pub sealed: u64,
    /// Idempotency keys replaced by their hash.
    pub hashed: u64,
    /// Other entries copied as they were (indexes, accounts, schemas).
    pub copied: u64,
    /// Recording files sealed.
    pub recordings: u64,
}

/// Seals the plaintext store in `dir`, if there is one (and finishes one that a crash interrupted).
pub(crate) fn seal_plaintext_store(
    dir: &Path,
    sealer: &Sealer,
    cache_bytes: u64,
) -> Result<Option<Migrated>, StorageError> {
    let target = sled_dir(dir);
    if !holds_plaintext_store(dir) {
        return Ok(None);
    }
    let mut migrated = Migrated::default();
    if !target.exists() {
        let building = dir.join(BUILDING);
        if building.exists() {
            std::fs::remove_dir_all(&building).map_err(sled::Error::from)?;
        }
        copy_sealed(dir, &building, sealer, cache_bytes, &mut migrated)?;
        std::fs::rename(&building, &target).map_err(sled::Error::from)?;
        sync_dir(dir)?;
    }
    remove_plaintext_files(dir)?;
    migrated.recordings = seal_recordings(&dir.join("recordings"), sealer)?;
    Ok(Some(migrated))
}

fn copy_sealed(
    from: &Path,
    to: &Path,
    sealer: &Sealer,
    cache_bytes: u64,
    migrated: &mut Migrated,
) -> Result<(), StorageError> {
    let old = open_db_when_released(from, cache_bytes, RELEASE_WAIT)?;
    let new = open_db_when_released(to, cache_bytes, RELEASE_WAIT)?;
    for name in old.tree_names() {
        let tree_name = String::from_utf8_lossy(&name).into_owned();
        let (source, sink) = (old.open_tree(&name)?, new.open_tree(&name)?);
        let mut batch = sled::Batch::default();
        let mut pending = 0;
        for entry in source.iter() {
            let (key, value) = entry?;
            match convert(&tree_name, &key, &value, sealer) {
                Converted::Sealed(value) => {
                    migrated.sealed += 1;
                    batch.insert(key, value);
                }
                Converted::Rekeyed(key) => {
                    migrated.hashed += 1;
                    batch.insert(key, value);
                }
                Converted::Kept => {
                    migrated.copied += 1;
                    batch.insert(key, value);
                }
            }
            pending += 1;
            if pending == BATCH {
                sink.apply_batch(std::mem::take(&mut batch))?;
                pending = 0;
            }
        }
        sink.apply_batch(batch)?;
    }
    new.flush()?;
    drop((old, new));
    Ok(())
}

enum Converted {
    Sealed(Vec<u8>),
    Rekeyed(Vec<u8>),
    Kept,
}

fn convert(tree: &str, key: &[u8], value: &[u8], sealer: &Sealer) -> Converted {
    let sealed_tree = match tree {
        trees::REQUESTS => Some(Sealed::Requests),
        trees::INTAKE => Some(Sealed::Intake),
        trees::DELIVERIES => Some(Sealed::Deliveries),
        trees::META if key == crate::meta::TOKEN_SECRET => Some(Sealed::Meta),
        _ => None,
    };
    if let Some(sealed_tree) = sealed_tree {
        if is_sealed(value) {
            return Converted::Kept;
        }
        return Converted::Sealed(sealer.seal(sealed_tree, key, value));
    }
    if tree == trees::IDEMPOTENCY {
        // `account \0 env \0 internal id`: the scope stays readable, the client's text becomes its hash.
        if let Some(split) = scope_end(key) {
            let mut rekeyed = key[..split].to_vec();
            rekeyed.extend_from_slice(&sealer.index_hash(&key[split..]));
            return Converted::Rekeyed(rekeyed);
        }
    }
    Converted::Kept
}

/// Where the scope prefix `account \0 env \0` of a key ends.
fn scope_end(key: &[u8]) -> Option<usize> {
    let first = key.iter().position(|&b| b == 0)?;
    let second = key[first + 1..].iter().position(|&b| b == 0)?;
    Some(first + 1 + second + 1)
}

/// Removes sled's files of the plaintext layout from the top of `dir`.
fn remove_plaintext_files(dir: &Path) -> Result<(), StorageError> {
    for entry in std::fs::read_dir(dir).map_err(sled::Error::from)? {
        let entry = entry.map_err(sled::Error::from)?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let path = entry.path();
        if name == "blobs" && path.is_dir() {
            std::fs::remove_dir_all(&path).map_err(sled::Error::from)?;
        } else if name == "conf" || name == "db" || name.starts_with("snap.") {
            std::fs::remove_file(&path).map_err(sled::Error::from)?;
        }
    }
    sync_dir(dir)
}

/// Seals every recording file in `dir` still in the clear, each written beside its name and renamed over
/// it. A recording from before sealing names no request, so its key is its call's.
fn seal_recordings(dir: &Path, sealer: &Sealer) -> Result<u64, StorageError> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(0);
    };
    let mut sealed = 0;
    for entry in entries {
        let entry = entry.map_err(sled::Error::from)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".part") {
            continue;
        }
        let bytes = std::fs::read(entry.path()).map_err(sled::Error::from)?;
        if super::is_sealed_file(&bytes) {
            continue;
        }
        let call = name.split('.').next().unwrap_or_default();
        let file = sealer.seal_file(&crate::RequestId::from(call), &name, &bytes);
        let partial = dir.join(format!("{name}.part"));
        std::fs::write(&partial, file)
            .and_then(|()| std::fs::rename(&partial, entry.path()))
            .map_err(sled::Error::from)?;
        sealed += 1;
    }
    Ok(sealed)
}

fn sync_dir(dir: &Path) -> Result<(), StorageError> {
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| sled::Error::from(e).into())
}
