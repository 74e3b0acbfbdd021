//! What a store is opened with: its engine, the node's own directory, the master key and the cache. The
//! one way to open a store is [`crate::Store::open`] with one of these.

use std::path::{Path, PathBuf};

use crate::seal::KeySource;
use crate::{EngineChoice, DEFAULT_CACHE_BYTES};

/// How to open a store.
#[derive(Clone)]
pub struct StorageConfig {
    /// The node's own directory: sled's files and the keyring on sled; on either engine the master key
    /// when it is kept beside the data, the audit mark and the recordings' place.
    pub dir: PathBuf,
    /// sled (the default) or a PostgreSQL database.
    pub engine: EngineChoice,
    /// Where the master key comes from.
    pub key: KeySource,
    /// The most sled's page cache may hold.
    pub cache_bytes: u64,
    /// The name this node holds the orchestrator lease under, when it runs the work: on PostgreSQL every
    /// write commits only while the lease is still this name's. `None` for a store that runs no work (a
    /// command, a test), and on sled it changes nothing.
    pub holder: Option<String>,
    /// A node standing by on a shared PostgreSQL database: the store answers reads and appends their audit
    /// events, and its opening writes nothing ([`crate::Store::open`]).
    pub standby: bool,
}

impl StorageConfig {
    /// sled in `dir`, its master key beside the data, the default cache, no lease.
    pub fn embedded(dir: impl AsRef<Path>) -> StorageConfig {
        StorageConfig {
            dir: dir.as_ref().to_path_buf(),
            engine: EngineChoice::Sled,
            key: KeySource::BesideData,
            cache_bytes: DEFAULT_CACHE_BYTES,
            holder: None,
            standby: false,
        }
    }

    /// On `engine` instead.
    pub fn on(mut self, engine: EngineChoice) -> StorageConfig {
        self.engine = engine;
        self
    }

    /// With the master key `key` names.
    pub fn key(mut self, key: KeySource) -> StorageConfig {
        self.key = key;
        self
    }

    /// With a page cache of at most `bytes`.
    pub fn cache_bytes(mut self, bytes: u64) -> StorageConfig {
        self.cache_bytes = bytes;
        self
    }

    /// For a node standing by on a shared PostgreSQL database, which reads and runs no work: the opening
    /// writes nothing (it refuses a database without a keyring yet, and leaves a purge a crash interrupted
    /// to the holder), records of other nodes' writes are never kept in memory (accounts, schemas and payers
    /// are read from the database each time), the audit log's appends chain after the tip they read, and
    /// a value that does not open with the keys held is tried again after reading its keys (the holder's
    /// purges replace them).
    pub fn standby(mut self) -> StorageConfig {
        self.standby = true;
        self
    }

    /// For the node that holds the orchestrator lease under `holder`.
    pub fn leased(mut self, holder: &str) -> StorageConfig {
        self.holder = Some(holder.to_owned());
        self
    }
}
