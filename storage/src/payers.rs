//! The payer directory: bound, decoded and cached here, kept by the engine
//! ([`crate::engine::operations::Operations`]).

use std::sync::Arc;

use crate::audit::NewEvent;
use crate::codec::{decode, encode};
use crate::engine::operations::Payers;
use crate::{trees, PayerRecord, StorageError, Store};

impl Store {
    /// Creates or replaces a payer directory entry, with `events` (its `payer.change`).
    pub async fn put_payer(
        &self,
        payer: &PayerRecord,
        events: &[NewEvent],
    ) -> Result<(), StorageError> {
        let name = payer.name.as_str();
        let stored = self.bound(trees::PAYERS, name.as_bytes(), &encode(payer));
        let engine = self.engine();
        self.current_payers
            .changed_after(engine.put_payer(name, &stored, events))
            .await
    }

    /// The whole payer directory, in name order.
    pub async fn payers(&self) -> Result<Vec<PayerRecord>, StorageError> {
        self.engine()
            .payers()
            .await?
            .into_iter()
            .map(|(name, stored)| self.stored_payer(&name, &stored))
            .collect()
    }

    /// One directory entry by its canonical name.
    pub async fn payer(&self, name: &str) -> Result<Option<PayerRecord>, StorageError> {
        let payer = self
            .current_payers
            .get(name, || async {
                self.engine()
                    .payer(name)
                    .await?
                    .map(|stored| self.stored_payer(name, &stored).map(Arc::new))
                    .transpose()
            })
            .await?;
        Ok(payer.map(Arc::unwrap_or_clone))
    }

    /// The entry `stored` under `name`, checked.
    fn stored_payer(&self, name: &str, stored: &[u8]) -> Result<PayerRecord, StorageError> {
        decode(self.unbound(trees::PAYERS, name.as_bytes(), stored)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entries are kept in memory once read: a payer written after it was read is read anew.
    async fn a_payer_read_before_a_write_is_read_anew_after_it(engine: crate::TestEngine) {
        let (_dir, store) = engine.open_temp();
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

    crate::on_both_engines!(a_payer_read_before_a_write_is_read_anew_after_it,);
}
