//! Schemas: each schema's head (its latest version and flags) and its immutable versions.

use super::{on_engine, Engine};
use crate::audit::NewEvent;
use crate::StorageError;

/// A schema as a change reads it: its bound head, and the bound record of its latest version (the highest:
/// versions only count up), `None` when that version is missing.
pub(crate) struct StoredSchema<'a> {
    pub(crate) head: &'a [u8],
    pub(crate) latest: Option<&'a [u8]>,
}

/// What a change writes: the schema's new head, bound, whose latest version is `latest_version`, and
/// that version's bound record when the change publishes it (`None` when only the flags change).
pub(crate) struct SchemaWrite {
    pub(crate) head: Vec<u8>,
    pub(crate) latest_version: u32,
    pub(crate) version: Option<Vec<u8>>,
}

/// How a schema changes, given it as stored (`None`: no such schema): checked, decided and bound by the
/// store, which answers its own value and what to write (`None`: nothing).
pub(crate) type SchemaChange<'a, T> =
    &'a (dyn Fn(Option<StoredSchema<'_>>) -> Result<(T, Option<SchemaWrite>), StorageError> + Sync);

/// What every engine does with schemas.
pub(crate) trait Schemas {
    /// The bound head of schema `id`.
    async fn schema_head(&self, id: &str) -> Result<Option<Vec<u8>>, StorageError>;

    /// The bound record of version `version` of schema `id`.
    async fn schema_version(&self, id: &str, version: u32)
        -> Result<Option<Vec<u8>>, StorageError>;

    /// Writes what `change` makes of schema `id` as stored, head and version together, with `events`;
    /// when it writes nothing, nothing is audited either. Answers the change's value.
    async fn change_schema<T>(
        &self,
        id: &str,
        change: SchemaChange<'_, T>,
        events: &[NewEvent],
    ) -> Result<T, StorageError>;
}

impl Schemas for Engine<'_> {
    async fn schema_head(&self, id: &str) -> Result<Option<Vec<u8>>, StorageError> {
        on_engine!(self, e => e.schema_head(id))
    }

    async fn schema_version(
        &self,
        id: &str,
        version: u32,
    ) -> Result<Option<Vec<u8>>, StorageError> {
        on_engine!(self, e => e.schema_version(id, version))
    }

    async fn change_schema<T>(
        &self,
        id: &str,
        change: SchemaChange<'_, T>,
        events: &[NewEvent],
    ) -> Result<T, StorageError> {
        on_engine!(self, e => e.change_schema(id, change, events))
    }
}
