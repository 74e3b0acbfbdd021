//! The payer directory as a sled tree. An entry and its audit events are not one transaction: the
//! directory holds no PHI, and a start applies dozens of entries, each transaction taking sled's
//! process-wide write lock. The events are appended right after the entry, under the same write gate.

use super::Embedded;
use crate::audit::NewEvent;
use crate::engine::operations::Payers;
use crate::StorageError;

impl Payers for Embedded<'_> {
    async fn payer(&self, name: &str) -> Result<Option<Vec<u8>>, StorageError> {
        Ok(self.0.payers.get_async(name).await?.map(|v| v.to_vec()))
    }

    async fn payers(&self) -> Result<Vec<(String, Vec<u8>)>, StorageError> {
        let entries = self.0.payers.read_prefix([]).await?;
        Ok(entries
            .into_iter()
            .map(|(name, record)| (String::from_utf8_lossy(&name).into_owned(), record.to_vec()))
            .collect())
    }

    async fn put_payer(
        &self,
        name: &str,
        record: &[u8],
        events: &[NewEvent],
    ) -> Result<(), StorageError> {
        let store = self.0;
        {
            let _open = store.group.gate.read().expect("write gate");
            store.payers.insert(name, record)?;
            crate::audit::append_plain(&store.audit, &store.group.chain, events.to_vec(), false)?;
        }
        store.durable().await
    }
}
