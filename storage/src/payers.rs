//! The payer directory.

use crate::audit::NewEvent;
use crate::codec::{decode, encode};
use crate::{trees, PayerRecord, StorageError, Store};

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
            let key = payer.name.as_bytes();
            let stored = self.bound(trees::PAYERS, key, &encode(payer));
            self.current_payers
                .changed(|| self.payers.insert(key, stored))?;
            crate::audit::append_plain(&self.audit, &self.group.chain, events.to_vec(), false)?;
        }
        self.durable().await
    }

    /// The whole payer directory, in name order.
    pub async fn payers(&self) -> Result<Vec<PayerRecord>, StorageError> {
        self.payers
            .read_prefix([])
            .await?
            .into_iter()
            .map(|(name, stored)| decode(self.unbound(trees::PAYERS, &name, &stored)?))
            .collect()
    }

    /// One directory entry by its canonical name.
    pub async fn payer(&self, name: &str) -> Result<Option<PayerRecord>, StorageError> {
        let payer = self
            .current_payers
            .get(name, || async {
                self.payers
                    .get_async(name.as_bytes())
                    .await?
                    .map(|v| {
                        decode(self.unbound(trees::PAYERS, name.as_bytes(), &v)?)
                            .map(std::sync::Arc::new)
                    })
                    .transpose()
            })
            .await?;
        Ok(payer.map(std::sync::Arc::unwrap_or_clone))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entries are kept in memory once read: a payer written after it was read is read anew.
    #[tokio::test]
    async fn a_payer_read_before_a_write_is_read_anew_after_it() {
        let (_dir, store) = crate::TestEngine::Sled.open_temp();
        let mut payer = PayerRecord {
            name: "Aetna".into(),
            aliases: vec![],
            phone: Some("8005550100".into()),
            required_inputs: vec![],
            electronic: false,
            electronic_payer_id: None,
            member_id_prefixes: vec![],
            calling_hours: None,
            timezone: None,
        };
        store.put_payer(&payer, &[]).await.unwrap();
        assert_eq!(store.payer("Aetna").await.unwrap(), Some(payer.clone()));
        payer.timezone = Some("America/Chicago".into());
        store.put_payer(&payer, &[]).await.unwrap();
        assert_eq!(store.payer("Aetna").await.unwrap(), Some(payer));
        assert_eq!(store.payer("Cigna").await.unwrap(), None);
    }
}
