//! The payer directory.

use crate::audit::NewEvent;
use crate::codec::{decode, encode};
use crate::{PayerRecord, StorageError, Store};

impl Store {
    /// Creates or replaces a payer directory entry, with `events` (its `payer.change`) appended right
    /// after it. Not one transaction: the directory holds no PHI, and a start applies dozens of entries,
    /// each transaction taking sled's process-wide write lock.
    pub async fn put_payer(
        &self,
        payer: &PayerRecord,
        events: &[NewEvent],
    ) -> Result<(), StorageError> {
        {
            let _open = self.group.gate.read().expect("write gate");
            self.payers.insert(payer.name.as_bytes(), encode(payer))?;
            crate::audit::append_plain(&self.audit, &self.group.chain, events.to_vec(), false)?;
        }
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
