//! The payer directory: one entry per payer, by its canonical name.

use super::{on_engine, Engine};
use crate::audit::NewEvent;
use crate::StorageError;

/// What every engine does with the payer directory.
pub(crate) trait Payers {
    /// The bound entry of the payer named `name`.
    async fn payer(&self, name: &str) -> Result<Option<Vec<u8>>, StorageError>;

    /// Every entry's name and bound record, in name order.
    async fn payers(&self) -> Result<Vec<(String, Vec<u8>)>, StorageError>;

    /// Creates or replaces the entry of the payer named `name` with its bound `record`, with `events`.
    async fn put_payer(
        &self,
        name: &str,
        record: &[u8],
        events: &[NewEvent],
    ) -> Result<(), StorageError>;
}

impl Payers for Engine<'_> {
    async fn payer(&self, name: &str) -> Result<Option<Vec<u8>>, StorageError> {
        on_engine!(self, e => e.payer(name))
    }

    async fn payers(&self) -> Result<Vec<(String, Vec<u8>)>, StorageError> {
        on_engine!(self, e => e.payers())
    }

    async fn put_payer(
        &self,
        name: &str,
        record: &[u8],
        events: &[NewEvent],
    ) -> Result<(), StorageError> {
        on_engine!(self, e => e.put_payer(name, record, events))
    }
}
