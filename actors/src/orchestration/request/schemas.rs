//! [`StoreSchemas`]: the schemas a request actor decides with, read from the store.
//!
//! The store hands out one shared decoded copy of each (immutable) schema version, so reading a version
//! again costs a page-cache lookup; a schema's head (which version is latest) changes, and is read each
//! time it is asked for (once when the run starts, once when a follow-up leg opens).

use std::sync::Arc;

use switchboard_storage::{SchemaVersionRecord, Store};

use super::SchemaCatalog;
use crate::orchestration::error::OrchestrationError;

/// The store's schemas.
pub(crate) struct StoreSchemas {
    store: Store,
}

impl StoreSchemas {
    pub(crate) fn new(store: Store) -> StoreSchemas {
        StoreSchemas { store }
    }
}

impl SchemaCatalog for StoreSchemas {
    async fn latest_version(&mut self, id: &str) -> Result<Option<u32>, OrchestrationError> {
        Ok(self
            .store
            .schema_head(id)
            .await?
            .map(|head| head.latest_version))
    }

    async fn version(
        &mut self,
        id: &str,
        version: u32,
    ) -> Result<Arc<SchemaVersionRecord>, OrchestrationError> {
        self.store
            .schema_version(id, version)
            .await?
            .ok_or_else(|| OrchestrationError::SchemaMissing {
                id: id.to_owned(),
                version,
            })
    }
}
