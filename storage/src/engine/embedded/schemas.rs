//! Schemas as two sled trees, heads and versions, written in one transaction with the audit chain.

use sled::transaction::ConflictableTransactionError;

use super::Embedded;
use crate::audit::NewEvent;
use crate::engine::operations::{SchemaChange, Schemas, StoredSchema};
use crate::trees::schema_version_key;
use crate::StorageError;

impl Schemas for Embedded<'_> {
    async fn schema_head(&self, id: &str) -> Result<Option<Vec<u8>>, StorageError> {
        Ok(self.0.schema_heads.get_async(id).await?.map(|v| v.to_vec()))
    }

    async fn schema_version(
        &self,
        id: &str,
        version: u32,
    ) -> Result<Option<Vec<u8>>, StorageError> {
        let key = schema_version_key(id, version);
        Ok(self
            .0
            .schema_versions
            .get_async(&key)
            .await?
            .map(|v| v.to_vec()))
    }

    async fn change_schema<T>(
        &self,
        id: &str,
        change: SchemaChange<'_, T>,
        events: &[NewEvent],
    ) -> Result<T, StorageError> {
        let store = self.0;
        let (value, changed) = store.audited_if_changed(
            &[&store.schema_heads, &store.schema_versions],
            events,
            |trees| {
                let (heads, versions) = (&trees[0], &trees[1]);
                let abort = ConflictableTransactionError::Abort;
                let head = heads.get(id.as_bytes())?;
                let latest = match &head {
                    // The head names its latest version: the store reads it for the engine.
                    Some(head) => {
                        let latest = store.stored_schema_head(id, head).map_err(abort)?;
                        versions.get(schema_version_key(id, latest.latest_version))?
                    }
                    None => None,
                };
                let stored = head.as_deref().map(|head| StoredSchema {
                    head,
                    latest: latest.as_deref(),
                });
                let (value, write) = change(stored).map_err(abort)?;
                let Some(write) = write else {
                    return Ok(((value, false), false));
                };
                if let Some(version) = write.version {
                    versions.insert(schema_version_key(id, write.latest_version), version)?;
                }
                heads.insert(id.as_bytes(), write.head)?;
                Ok(((value, true), true))
            },
        )?;
        if changed {
            store.durable().await?;
        }
        Ok(value)
    }
}
