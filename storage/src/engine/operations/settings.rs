//! The process-wide settings a store keeps: the token-signing secret (sealed), the instant a manual
//! clock was last moved to, and the fingerprints of provisioned declarations (both bound). Each is kept
//! under its name, which its MAC covers.

use super::{on_engine, Engine};
use crate::StorageError;

/// The name of the token-signing secret.
pub(crate) const TOKEN_SECRET: &str = "token_secret";
/// The name of the manual clock's instant.
pub(crate) const MANUAL_CLOCK: &str = "manual_clock";
/// Before a declaration's key (e.g. `account:acme`), the name of its provisioned fingerprint.
pub(crate) const PROVISIONED: &str = "provisioned:";

/// How the manual clock moves, given its bound instant as stored (or none): the bound instant to store.
pub(crate) type ClockMove<'a> = &'a (dyn Fn(Option<&[u8]>) -> Vec<u8> + Sync);

/// What every engine does with settings. None of them is audited.
pub(crate) trait Settings {
    /// The sealed token secret, once a first start made it.
    async fn token_secret(&self) -> Result<Option<Vec<u8>>, StorageError>;

    /// Stores the sealed token secret `sealed` unless one is stored; answers the one stored, so the
    /// first ever kept stays.
    async fn keep_token_secret(&self, sealed: Vec<u8>) -> Result<Vec<u8>, StorageError>;

    /// The manual clock's bound instant, if it was ever moved.
    async fn manual_clock(&self) -> Result<Option<Vec<u8>>, StorageError>;

    /// Stores what `moved` makes of the manual clock's instant as stored, in one transaction, so that
    /// concurrent moves each see the other's.
    async fn move_manual_clock(&self, moved: ClockMove<'_>) -> Result<(), StorageError>;

    /// The bound fingerprint of the declaration `key`, last provisioned.
    async fn provisioned(&self, key: &str) -> Result<Option<Vec<u8>>, StorageError>;

    /// Stores the bound fingerprint of the declaration `key`.
    async fn set_provisioned(&self, key: &str, record: Vec<u8>) -> Result<(), StorageError>;

    /// Every setting's name and value as stored, in name order (bytes): for the layout conversion.
    async fn settings(&self) -> Result<Vec<(String, Vec<u8>)>, StorageError>;

    /// Rewrites the setting `name`: a layout conversion of `switchboard migrate`.
    async fn rewrite_setting(&self, name: &str, record: Vec<u8>) -> Result<(), StorageError>;
}

impl Settings for Engine<'_> {
    async fn token_secret(&self) -> Result<Option<Vec<u8>>, StorageError> {
        on_engine!(self, e => e.token_secret())
    }

    async fn keep_token_secret(&self, sealed: Vec<u8>) -> Result<Vec<u8>, StorageError> {
        on_engine!(self, e => e.keep_token_secret(sealed))
    }

    async fn manual_clock(&self) -> Result<Option<Vec<u8>>, StorageError> {
        on_engine!(self, e => e.manual_clock())
    }

    async fn move_manual_clock(&self, moved: ClockMove<'_>) -> Result<(), StorageError> {
        on_engine!(self, e => e.move_manual_clock(moved))
    }

    async fn provisioned(&self, key: &str) -> Result<Option<Vec<u8>>, StorageError> {
        on_engine!(self, e => e.provisioned(key))
    }

    async fn set_provisioned(&self, key: &str, record: Vec<u8>) -> Result<(), StorageError> {
        on_engine!(self, e => e.set_provisioned(key, record))
    }

    async fn settings(&self) -> Result<Vec<(String, Vec<u8>)>, StorageError> {
        on_engine!(self, e => e.settings())
    }

    async fn rewrite_setting(&self, name: &str, record: Vec<u8>) -> Result<(), StorageError> {
        on_engine!(self, e => e.rewrite_setting(name, record))
    }
}
