//! [`StoreSchemas`]: the schemas a request actor decides with, read from the store.
//!
//! A published schema version never changes, so each version is read once per actor and kept; a schema's
//! head (which version is latest) does change, so it is read each time it is asked for (once when the run
//! starts, once when a follow-up leg opens).

use std::collections::HashMap;
use std::sync::Arc;

use switchboard_storage::{SchemaVersionRecord, Store};

use super::SchemaCatalog;
use crate::orchestration::error::OrchestrationError;

/// The store's schemas, with the versions already read kept for the actor's lifetime (a request runs
/// at most two: its primary schema and a follow-up leg).
pub(crate) struct StoreSchemas {
    store: Store,
    versions: HashMap<(String, u32), Arc<SchemaVersionRecord>>,
}

impl StoreSchemas {
    pub(crate) fn new(store: Store) -> StoreSchemas {
        StoreSchemas {
            store,
            versions: HashMap::new(),
        }
    }
}

impl SchemaCatalog for StoreSchemas {
    fn latest_version(&mut self, id: &str) -> Result<Option<u32>, OrchestrationError> {
        Ok(self.store.schema_head(id)?.map(|head| head.latest_version))
    }

    fn version(
        &mut self,
        id: &str,
        version: u32,
    ) -> Result<Arc<SchemaVersionRecord>, OrchestrationError> {
        let key = (id.to_owned(), version);
        if let Some(schema) = self.versions.get(&key) {
            return Ok(Arc::clone(schema));
        }
        let schema = self
            .store
            .schema_version(id, version)?
            .map(Arc::new)
            .ok_or_else(|| OrchestrationError::SchemaMissing {
                id: id.to_owned(),
                version,
            })?;
        self.versions.insert(key, Arc::clone(&schema));
        Ok(schema)
    }
}
