//! Replacing the keys of what a purge removed.
//!
//! A purged request's values were sealed under its batch's data key, which derives from an hour's epoch key
//! (or, after an earlier purge, is kept wrapped under a vault epoch). Replacing that epoch key in the
//! keyring makes every copy sealed under it unreadable. Before that, whoever else the epoch served keeps
//! access: each other owner of the hour gets its data key kept wrapped under a new vault epoch (the same
//! key, its values untouched), each other entry of a replaced vault is wrapped again, and the purged
//! request's own batch, when other members remain, gets a new random key and its values sealed again.
//!
//! All of it runs with the write gate held: no write can seal a value under a key that is about to go, and
//! a value sealed before and written after is sealed again by its writer (the sealer's generation moved).

use std::collections::BTreeSet;

use rand::RngCore;
use zeroize::Zeroizing;

use super::{members, recording_files};
use crate::codec::decode;
use crate::requests::{intake_chunk_key, intake_chunks, IntakeRecord};
use crate::seal::overrides::{self, epoch_of_entry};
use crate::seal::{epoch_of, Key, Sealed, VAULT_BASE};
use crate::{RequestBatchId, RequestId, RequestRecord, StorageError, Store};

impl Store {
    /// Replaces the keys every pending purge names (see the module docs): afterwards what was purged is
    /// unrecoverable from `data_dir`. Idempotent: a crash anywhere leaves it to be done again at the next
    /// opening.
    pub async fn finish_purges(&self) -> Result<(), StorageError> {
        self.complete_shreds()
    }

    pub(crate) fn complete_shreds(&self) -> Result<(), StorageError> {
        if self.shreds.is_empty()? {
            return Ok(());
        }
        let _held = self.group.gate.write().expect("write gate");
        for entry in self.shreds.iter() {
            let (owner, flags) = entry?;
            let rekey = flags.first() == Some(&1);
            self.shred(&owner, rekey)?;
            self.shreds.remove(&owner)?;
            self.flush_now()?;
        }
        Ok(())
    }

    fn shred(&self, owner: &[u8], rekey: bool) -> Result<(), StorageError> {
        let keyring = &self.sealer.keyring;
        // The epoch whose key sealed the owner's values: its vault when its key is kept, else its hour.
        let replaced = match self.data_keys.get(owner)? {
            Some(entry) => epoch_of_entry(&entry).unwrap_or_else(|| epoch_of(owner)),
            None => epoch_of(owner),
        };
        let vault = keyring.fresh_vault_epoch()?;
        let resealed = if rekey {
            self.rekey(owner, vault)?
        } else {
            self.data_keys.remove(owner)?;
            self.sealer.overrides.set(owner, None);
            Vec::new()
        };
        // Who else the replaced key served, with the data key each keeps.
        let mut survivors = Vec::new();
        if replaced < VAULT_BASE {
            for other in self.owners_of_hour(replaced)? {
                if other.as_slice() != owner && !self.data_keys.contains_key(&other)? {
                    let key = self.sealer.derived_key(replaced, &other)?;
                    survivors.push((other, key));
                }
            }
        } else {
            for entry in self.data_keys.iter() {
                let (other, bytes) = entry?;
                if other.as_ref() != owner && epoch_of_entry(&bytes) == Some(replaced) {
                    let key = overrides::decode(&other, &bytes, keyring)?.key;
                    survivors.push((other.to_vec(), key));
                }
            }
        }
        let mut kept = crate::engine::Batch::default();
        for (other, key) in survivors {
            kept.insert(
                other.clone(),
                overrides::encode(&other, vault, &key, keyring)?,
            );
            let kept_key = overrides::Override {
                epoch: vault,
                key,
                previous: None,
            };
            self.sealer.overrides.set(&other, Some(kept_key));
        }
        self.data_keys.apply_batch(kept)?;
        // The kept keys reach the disk before the key they come from is gone.
        self.flush_now()?;
        // And so does the batch's new key before a recording sealed under it replaces the old file: a
        // crash in between leaves each recording under the old key, which a new start's shred opens.
        for (name, sealed) in resealed {
            self.write_recording(&name, &sealed)?;
        }
        keyring.replace(replaced)?;
        self.sealer.keys_changed();
        Ok(())
    }

    /// Gives `batch` a new random data key kept under `vault` and seals its values again with it. Every
    /// value is opened first; the new key is then known (with the old one beside it, so a reader meanwhile
    /// opens either) before the values sealed under it are written. The members' recordings are sealed
    /// again too, and handed back: their files are replaced once the new key is on disk.
    fn rekey(&self, batch: &[u8], vault: u32) -> Result<Vec<(String, Vec<u8>)>, StorageError> {
        let mut key: Key = Zeroizing::new([0u8; 32]);
        rand::rngs::OsRng.fill_bytes(key.as_mut());
        let batch_id = RequestBatchId::from(String::from_utf8_lossy(batch).into_owned());
        let first = intake_chunk_key(&batch_id, 0);
        let count = match self.group.intake.get(&first)? {
            Some(bytes) => {
                let chunk: IntakeRecord =
                    decode(&self.sealer.open(Sealed::Intake, &first, &bytes)?)?;
                chunk.count
            }
            None => 0,
        };
        let mut opened = Vec::new();
        let mut recordings = Vec::new();
        for chunk in 0..intake_chunks(count).max(1) {
            let chunk_key = intake_chunk_key(&batch_id, chunk);
            if let Some(bytes) = self.group.intake.get(&chunk_key)? {
                let plain = self.sealer.open(Sealed::Intake, &chunk_key, &bytes)?;
                opened.push((Sealed::Intake, chunk_key, plain));
            }
        }
        for member in members(&batch_id, count) {
            for (tree, stored) in [
                (Sealed::Requests, &self.group.requests),
                (Sealed::Deliveries, &self.group.deliveries),
            ] {
                if let Some(bytes) = stored.get(member.as_bytes())? {
                    let plain = self.sealer.open(tree, member.as_bytes(), &bytes)?;
                    if tree == Sealed::Requests {
                        recordings.extend(self.recordings_of(&plain)?);
                    }
                    opened.push((tree, member.as_bytes().to_vec(), plain));
                }
            }
        }
        let previous = self
            .sealer
            .overrides
            .get(batch)
            .map(|kept| kept.key.clone())
            .or_else(|| self.sealer.derived_key(epoch_of(batch), batch).ok());
        let entry = overrides::encode(batch, vault, &key, &self.sealer.keyring)?;
        let kept_key = overrides::Override {
            epoch: vault,
            key: key.clone(),
            previous,
        };
        self.sealer.overrides.set(batch, Some(kept_key));
        let (mut intake, mut requests, mut deliveries, mut rows) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (tree, stored_key, plain) in opened {
            let sealed = self
                .sealer
                .seal_under(tree, &stored_key, &plain, vault, &key);
            match tree {
                Sealed::Intake => intake.push((stored_key, sealed)),
                Sealed::Requests => {
                    rows.push((decode::<RequestRecord>(&plain)?, sealed.clone()));
                    requests.push((stored_key, sealed));
                }
                _ => deliveries.push((stored_key, sealed)),
            }
        }
        // The values sealed again and the entry that keeps their key, in one transaction: on PostgreSQL,
        // where each commit is durable at once, a crash between two commits would leave values sealed
        // under a key nothing keeps. On sled the gate holds them all for the next flush as well.
        let trees = [
            &self.group.intake,
            &self.group.requests,
            &self.group.deliveries,
            &self.data_keys,
        ];
        crate::engine::transaction(&trees, |t| {
            for (into, writes) in [(&t[0], &intake), (&t[1], &requests), (&t[2], &deliveries)] {
                for (stored_key, sealed) in writes {
                    into.put(stored_key.clone(), sealed.clone())?;
                }
            }
            for (record, sealed) in &rows {
                crate::requests::table_rows::put_row(&t[1], record, Some(sealed));
            }
            t[3].put(batch.to_vec(), entry.clone())?;
            Ok::<_, sled::transaction::ConflictableTransactionError<StorageError>>(())
        })?;
        Ok(recordings
            .into_iter()
            .map(|(name, audio)| {
                let sealed = self
                    .sealer
                    .seal_file_under(batch, &name, &audio, vault, &key);
                (name, sealed)
            })
            .collect())
    }

    /// The recordings a request's calls kept (`plain`, its stored record opened), opened.
    fn recordings_of(&self, plain: &[u8]) -> Result<Vec<(String, Vec<u8>)>, StorageError> {
        let record: RequestRecord = decode(plain)?;
        let mut kept = Vec::new();
        for name in recording_files(&record) {
            if let Some(audio) = self.recording_under_gate(&name)? {
                kept.push((name, audio));
            }
        }
        Ok(kept)
    }

    /// Every owner whose id (a UUID v7) was minted in hour `epoch`: batches, and requests that name none.
    /// The ids are found by their text, so an owner whose key derives from another epoch (the head of a
    /// batch converted from layout 3 has a UUID v4 id, epoch 0) is left out however its text begins.
    fn owners_of_hour(&self, epoch: u32) -> Result<BTreeSet<Vec<u8>>, StorageError> {
        let start = id_prefix(u64::from(epoch) * 3_600_000);
        let end = id_prefix((u64::from(epoch) + 1) * 3_600_000);
        let mut owners = BTreeSet::new();
        for key in self.group.intake.range(start.clone()..end.clone()).keys() {
            let key = key?;
            owners.insert(key[..key.len().saturating_sub(2)].to_vec());
        }
        for tree in [&self.group.requests, &self.group.deliveries] {
            for key in tree.range(start.clone()..end.clone()).keys() {
                let key = key?;
                let id = RequestId::from(String::from_utf8_lossy(&key).into_owned());
                owners.insert(match id.batch_place() {
                    Some((batch, _)) => batch.into_string().into_bytes(),
                    None => key.to_vec(),
                });
            }
        }
        owners.retain(|owner| epoch_of(owner) == epoch);
        Ok(owners)
    }
}

/// The text a UUID v7 minted at `millis` begins with (its first 48 bits are the milliseconds).
fn id_prefix(millis: u64) -> Vec<u8> {
    format!("{:08x}-{:04x}", millis >> 16, millis & 0xffff).into_bytes()
}
