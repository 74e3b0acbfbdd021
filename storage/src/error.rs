//! The storage layer's error type.

/// Everything that can go wrong below the orchestration layer.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// The engine failed (I/O, corruption, a lock held by another process, a database error).
    #[error("storage engine failure: {0}")]
    Engine(EngineError),
    /// A stored record could not be decoded: unknown format version or malformed body.
    #[error("stored {kind} record is unreadable: {reason}")]
    Corrupt {
        /// Record kind, e.g. `account`.
        kind: &'static str,
        /// What was wrong with it.
        reason: String,
    },
    /// A flush to disk failed, so the write it would have made durable is not acknowledged.
    #[error("flush to disk failed: {0}")]
    Flush(String),
    /// The code of a grouped write panicked; nothing of that write was stored.
    #[error("a store write panicked and was not applied")]
    WritePanicked,
    /// The flusher has shut down; the store is closing.
    #[error("store is closed")]
    Closed,
    /// An API key is already issued to another account.
    #[error("API key is already in use by another account")]
    CredentialKeyTaken,
    /// The request named by an update does not exist.
    #[error("request {0} does not exist")]
    RequestMissing(crate::RequestId),
    /// The account named by a write does not exist.
    #[error("account {0} does not exist")]
    AccountMissing(String),
    /// A concurrent create claimed this internal id first; nothing of the insert was written. The caller
    /// decides the replay again, now that the claim is visible. The message leaves the id out: clients put
    /// claim and record numbers there, and this error can reach a log.
    #[error("an internal id was claimed by a concurrent create")]
    InternalIdClaimed(String),
    /// A day would end with more requests booked than the account's capacity: another process booked the
    /// places this create was given since its ledger was read. Nothing was written.
    #[error("a day's capacity was taken by a concurrent create")]
    CapacityTaken,
    /// A new request's id is not its place in its batch ([`crate::RequestBatchId::member`]), which is how a
    /// request stored with its batch is found; nothing of the create was written.
    #[error("request {0} is not named by its place in its batch")]
    NotABatchMember(crate::RequestId),
    /// An operator of that name exists already (or the name is the configured admin's).
    #[error("an operator named {0} exists already")]
    OperatorExists(String),
    /// The operator named by a deletion does not exist.
    #[error("no such operator")]
    OperatorMissing,
    /// A backup could not be written.
    #[error("backup failed: {0}")]
    Backup(String),
    /// The master key given could not be read (a missing file, text that is not a 32-byte base64 key).
    #[error("{0}")]
    KeyUnreadable(String),
    /// The master key given does not open the keyring of the store: a wrong key. Nothing was changed.
    #[error("the master key does not open the store: it is not the key the store was sealed with (nothing was changed)")]
    KeyRefused,
    /// The store is sealed and no master key was given, nor kept beside the data. Nothing was changed.
    #[error("the store in {} is sealed and no master key was given: set [encryption] key_file or SWITCHBOARD_MASTER_KEY to the key it was sealed with (nothing in the directory was changed)", .0.display())]
    KeyMissing(std::path::PathBuf),
    /// The keyring file could not be read or written.
    #[error("keyring: {0}")]
    Keyring(String),
    /// The PostgreSQL database could not be reached, or its schema is not this binary's.
    #[error("{0}")]
    Database(String),
    /// A security record (an operator, an account, a schema, a payer, a setting) does not carry this
    /// store's MAC: it was written by someone without the master key, or altered. Refused.
    #[error("a record in {tree} does not carry this store's MAC (written without the master key, or altered); refused")]
    Unbound {
        /// The tree it is in (its key is left out: it may be an API key).
        tree: &'static str,
    },
    /// The audit log does not match its sealed head: it was truncated, replaced or rolled back by someone
    /// without the master key. The server refuses to start on it.
    #[error("the audit log: {0}")]
    AuditTampered(String),
    /// The store is not at this release's layout ([`crate::layout`]): `switchboard migrate` converts an
    /// older one. A start refuses it with nothing changed.
    #[error("{0}")]
    Unconverted(String),
    /// A value names an epoch whose key was destroyed: what it sealed is gone for good.
    #[error("the key of epoch {0} was destroyed")]
    KeyDestroyed(u32),
}

/// What an engine reported, opaque above the store: no caller depends on one engine's error type.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct EngineError(#[source] pub(crate) sled::Error);

impl From<sled::Error> for StorageError {
    fn from(e: sled::Error) -> Self {
        StorageError::Engine(EngineError(e))
    }
}

impl From<sled::transaction::TransactionError<StorageError>> for StorageError {
    fn from(e: sled::transaction::TransactionError<StorageError>) -> Self {
        match e {
            sled::transaction::TransactionError::Abort(inner) => inner,
            sled::transaction::TransactionError::Storage(engine) => engine.into(),
        }
    }
}

impl StorageError {
    /// Whether opening failed because another process (another Switchboard, a backup or key command)
    /// holds the store's lock.
    pub fn is_held_elsewhere(&self) -> bool {
        matches!(self, StorageError::Engine(EngineError(sled::Error::Io(e))) if crate::opening::is_lock_refusal(e))
    }
}
