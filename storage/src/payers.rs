//! The payer directory.

use crate::audit::NewEvent;
use crate::codec::{decode, encode};
use crate::{PayerRecord, StorageError, Store};

impl Store {
    /// Creates or replaces a payer directory entry, with `events` (its `payer.change`).
    pub async fn put_payer(
        &self,
        payer: &PayerRecord,
        events: &[NewEvent],
    ) -> Result<(), StorageError> {
        self.audited(&[&self.payers], events, |trees| {
            trees[0].insert(payer.name.as_bytes(), encode(payer))?;
            Ok(())
        })?;
        self.durable().await
    }

    /// The whole payer directory, in name order.
    pub fn payers(&self) -> Result<Vec<PayerRecord>, StorageError> {
        self.payers.iter().values().map(|v| decode(&v?)).collect()
    }

    /// One directory entry by its canonical name.
    pub fn payer(&self, name: &str) -> Result<Option<PayerRecord>, StorageError> {
        self.payers
            .get(name.as_bytes())?
            .map(|v| decode(&v))
            .transpose()
    }
}
