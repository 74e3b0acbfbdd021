//! The [`Store`] handle and the operations on accounts, schemas and payers.

use std::path::Path;
use std::sync::Arc;

use sled::transaction::{ConflictableTransactionError, TransactionalTree};
use sled::Transactional;

use crate::codec::{decode, encode};
use crate::durability::{FlushStats, Flusher};
use crate::trees::{self, schema_version_key};
use crate::{AccountRecord, PayerRecord, SchemaDefinition, SchemaHeadRecord, SchemaVersionRecord, StorageError};

/// Handle on the open store; cheap to clone, shared by every layer above.
#[derive(Clone)]
pub struct Store {
    db: sled::Db,
    accounts: sled::Tree,
    credential_keys: sled::Tree,
    schema_heads: sled::Tree,
    schema_versions: sled::Tree,
    payers: sled::Tree,
    pub(crate) meta: sled::Tree,
    flusher: Arc<Flusher>,
}

type TxResult<T> = Result<T, ConflictableTransactionError<StorageError>>;

impl Store {
    /// Opens (or creates) the store in `dir`. Fails if another process holds it.
    pub fn open(dir: &Path) -> Result<Store, StorageError> {
        // Our flusher is the only one: sled's periodic flush would add fsyncs without acknowledging anything.
        let db = sled::Config::new().path(dir).flush_every_ms(None).open()?;
        Ok(Store {
            accounts: db.open_tree(trees::ACCOUNTS)?,
            credential_keys: db.open_tree(trees::CREDENTIAL_KEYS)?,
            schema_heads: db.open_tree(trees::SCHEMA_HEADS)?,
            schema_versions: db.open_tree(trees::SCHEMA_VERSIONS)?,
            payers: db.open_tree(trees::PAYERS)?,
            meta: db.open_tree(trees::META)?,
            flusher: Arc::new(Flusher::start(db.clone())),
            db,
        })
    }

    /// Waits until every write made before the call is on disk.
    pub async fn durable(&self) -> Result<(), StorageError> {
        self.flusher.durable().await
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

    /// Flush counters, for metrics.
    pub fn flush_stats(&self) -> FlushStats {
        self.flusher.stats()
    }

    /// Bytes the store occupies on disk.
    pub fn size_on_disk(&self) -> Result<u64, StorageError> {
        Ok(self.db.size_on_disk()?)
    }

    // ---- accounts -------------------------------------------------------------------------------------

    /// Reads one account.
    pub fn account(&self, id: &str) -> Result<Option<AccountRecord>, StorageError> {
        self.accounts.get(id)?.map(|bytes| decode(&bytes)).transpose()
    }

    /// Every account, in id order.
    pub fn accounts(&self) -> Result<Vec<AccountRecord>, StorageError> {
        self.accounts.iter().values().map(|v| decode(&v?)).collect()
    }

    /// The account that issued `api_key`.
    pub fn account_by_key(&self, api_key: &str) -> Result<Option<AccountRecord>, StorageError> {
        match self.credential_keys.get(api_key)? {
            Some(account_id) => self.account(&String::from_utf8_lossy(&account_id)),
            None => Ok(None),
        }
    }

    /// Creates or replaces an account together with its key index, atomically and durably. Fails with
    /// [`StorageError::CredentialKeyTaken`] if one of its keys belongs to another account.
    pub async fn put_account(&self, account: &AccountRecord) -> Result<(), StorageError> {
        (&self.accounts, &self.credential_keys).transaction(|(accounts, keys)| {
            let previous = accounts.get(account.id.as_bytes())?;
            if let Some(previous) = previous {
                let previous: AccountRecord = decode(&previous).map_err(ConflictableTransactionError::Abort)?;
                for credential in &previous.credentials {
                    keys.remove(credential.key.as_bytes())?;
                }
            }
            for credential in &account.credentials {
                claim_key(keys, &credential.key, &account.id)?;
            }
            accounts.insert(account.id.as_bytes(), encode(account))?;
            Ok(())
        })?;
        self.durable().await
    }

    /// Deletes an account and its keys. Returns whether it existed.
    pub async fn delete_account(&self, id: &str) -> Result<bool, StorageError> {
        let existed = (&self.accounts, &self.credential_keys).transaction(|(accounts, keys)| {
            let Some(previous) = accounts.remove(id.as_bytes())? else {
                return Ok(false);
            };
            let previous: AccountRecord = decode(&previous).map_err(ConflictableTransactionError::Abort)?;
            for credential in &previous.credentials {
                keys.remove(credential.key.as_bytes())?;
            }
            Ok(true)
        })?;
        self.durable().await?;
        Ok(existed)
    }

    /// Adds a credential to an existing account.
    pub async fn add_credential(&self, account_id: &str, credential: crate::CredentialRecord) -> Result<(), StorageError> {
        (&self.accounts, &self.credential_keys).transaction(|(accounts, keys)| {
            let Some(current) = accounts.get(account_id.as_bytes())? else {
                return Err(ConflictableTransactionError::Abort(StorageError::AccountMissing(account_id.to_owned())));
            };
            let mut account: AccountRecord = decode(&current).map_err(ConflictableTransactionError::Abort)?;
            claim_key(keys, &credential.key, account_id)?;
            account.credentials.push(credential.clone());
            accounts.insert(account_id.as_bytes(), encode(&account))?;
            Ok(())
        })?;
        self.durable().await
    }

    // ---- schemas --------------------------------------------------------------------------------------

    /// Reads a schema's head.
    pub fn schema_head(&self, id: &str) -> Result<Option<SchemaHeadRecord>, StorageError> {
        self.schema_heads.get(id)?.map(|bytes| decode(&bytes)).transpose()
    }

    /// Reads one version of a schema.
    pub fn schema_version(&self, id: &str, version: u32) -> Result<Option<SchemaVersionRecord>, StorageError> {
        self.schema_versions
            .get(schema_version_key(id, version))?
            .map(|bytes| decode(&bytes))
            .transpose()
    }

    /// Publishes `definition` as a new version of schema `id` (version 1, or `first_version`, for a new
    /// schema; the latest plus one otherwise) and sets its flags. When `only_if_changed` is set and the
    /// latest version already has this content and these flags, nothing is written. Returns the head.
    pub async fn publish_schema(
        &self,
        id: &str,
        definition: &SchemaDefinition,
        flags: SchemaFlags,
        publish: PublishRule,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<SchemaHeadRecord, StorageError> {
        let head = (&self.schema_heads, &self.schema_versions).transaction(|(heads, versions)| {
            let current: Option<SchemaHeadRecord> = heads
                .get(id.as_bytes())?
                .map(|b| decode(&b))
                .transpose()
                .map_err(ConflictableTransactionError::Abort)?;
            let version = match (&current, publish) {
                (None, PublishRule::Always { first_version }) | (None, PublishRule::IfChanged { first_version }) => {
                    first_version.max(1)
                }
                (Some(head), PublishRule::Always { .. }) => head.latest_version + 1,
                (Some(head), PublishRule::IfChanged { first_version }) => {
                    let latest: Option<SchemaVersionRecord> = versions
                        .get(schema_version_key(id, head.latest_version))?
                        .map(|b| decode(&b))
                        .transpose()
                        .map_err(ConflictableTransactionError::Abort)?;
                    let same_content = latest.is_some_and(|l| &l.definition == definition);
                    let same_flags = head.retired == flags.retired && head.hidden == flags.hidden;
                    if same_content && same_flags {
                        return Ok(head.clone());
                    }
                    if same_content {
                        0 // flags only
                    } else {
                        (head.latest_version + 1).max(first_version)
                    }
                }
            };
            let latest_version = if version == 0 {
                current.as_ref().map_or(1, |h| h.latest_version)
            } else {
                let record = SchemaVersionRecord {
                    id: id.to_owned(),
                    version,
                    published_at: now,
                    definition: definition.clone(),
                };
                versions.insert(schema_version_key(id, version), encode(&record))?;
                version
            };
            let head = SchemaHeadRecord {
                id: id.to_owned(),
                latest_version,
                retired: flags.retired,
                hidden: flags.hidden,
            };
            heads.insert(id.as_bytes(), encode(&head))?;
            Ok(head)
        })?;
        self.durable().await?;
        Ok(head)
    }

    /// Marks a schema retired. Returns `None` when there is no such schema.
    pub async fn retire_schema(&self, id: &str) -> Result<Option<SchemaHeadRecord>, StorageError> {
        let head = self.schema_heads.transaction(|heads| {
            let Some(bytes) = heads.get(id.as_bytes())? else {
                return Ok(None);
            };
            let mut head: SchemaHeadRecord = decode(&bytes).map_err(ConflictableTransactionError::Abort)?;
            head.retired = true;
            heads.insert(id.as_bytes(), encode(&head))?;
            Ok(Some(head))
        })?;
        self.durable().await?;
        Ok(head)
    }

    // ---- payers ---------------------------------------------------------------------------------------

    /// Creates or replaces a payer directory entry.
    pub async fn put_payer(&self, payer: &PayerRecord) -> Result<(), StorageError> {
        self.payers.insert(payer.name.as_bytes(), encode(payer))?;
        self.durable().await
    }

    /// The whole payer directory, in name order.
    pub fn payers(&self) -> Result<Vec<PayerRecord>, StorageError> {
        self.payers.iter().values().map(|v| decode(&v?)).collect()
    }

    /// Writes raw bytes under a key of a tree; test support for corruption scenarios.
    #[doc(hidden)]
    pub fn corrupt_schema_version_for_tests(&self, id: &str, version: u32, bytes: &[u8]) -> Result<(), StorageError> {
        self.schema_versions.insert(schema_version_key(id, version), bytes)?;
        Ok(())
    }
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

fn claim_key(keys: &TransactionalTree, api_key: &str, account_id: &str) -> TxResult<()> {
    if let Some(owner) = keys.get(api_key.as_bytes())? {
        if owner.as_ref() != account_id.as_bytes() {
            return Err(ConflictableTransactionError::Abort(StorageError::CredentialKeyTaken));
        }
    }
    keys.insert(api_key.as_bytes(), account_id.as_bytes())?;
    Ok(())
}
