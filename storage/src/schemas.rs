//! Schemas: heads and immutable versions, bound, decoded and cached here, kept by the engine
//! ([`crate::engine::operations::Operations`]).

use std::sync::Arc;

use crate::audit::NewEvent;
use crate::codec::{decode, encode};
use crate::engine::operations::{SchemaWrite, Schemas, StoredSchema};
use crate::store::{PublishRule, SchemaFlags};
use crate::trees::{self, schema_version_key};
use crate::{SchemaDefinition, SchemaHeadRecord, SchemaVersionRecord, StorageError, Store};

impl Store {
    /// Reads a schema's head.
    pub async fn schema_head(&self, id: &str) -> Result<Option<SchemaHeadRecord>, StorageError> {
        let head = self
            .current_schema_heads
            .get(id, || async {
                self.engine()
                    .schema_head(id)
                    .await?
                    .map(|bytes| self.stored_schema_head(id, &bytes).map(Arc::new))
                    .transpose()
            })
            .await?;
        Ok(head.map(Arc::unwrap_or_clone))
    }

    /// Reads one version of a schema. Versions are immutable, so every reader shares one decoded copy.
    pub async fn schema_version(
        &self,
        id: &str,
        version: u32,
    ) -> Result<Option<Arc<SchemaVersionRecord>>, StorageError> {
        // The key as text for the map: schema ids are text, and the version's bytes are kept exact.
        let kept = format!("{id}\0{version}");
        self.current_schema_versions
            .get(&kept, || async {
                self.engine()
                    .schema_version(id, version)
                    .await?
                    .map(|bytes| {
                        self.stored_schema_version(id, version, &bytes)
                            .map(Arc::new)
                    })
                    .transpose()
            })
            .await
    }

    /// Publishes `definition` as a new version of schema `id` (version 1, or `first_version`, for a new
    /// schema; the latest plus one otherwise) and sets its flags. With [`PublishRule::IfChanged`], when the
    /// latest version already has this content and these flags, nothing is written. Returns the head.
    pub async fn publish_schema(
        &self,
        id: &str,
        definition: &SchemaDefinition,
        flags: SchemaFlags,
        publish: PublishRule,
        now: chrono::DateTime<chrono::Utc>,
        events: &[NewEvent],
    ) -> Result<SchemaHeadRecord, StorageError> {
        let change = |stored: Option<StoredSchema<'_>>| {
            let current = match &stored {
                Some(stored) => Some(self.stored_schema_head(id, stored.head)?),
                None => None,
            };
            // The version to publish, or `None` when only the flags change.
            let new_version = match (&current, publish) {
                (None, PublishRule::Always { first_version })
                | (None, PublishRule::IfChanged { first_version }) => Some(first_version.max(1)),
                (Some(head), PublishRule::Always { .. }) => Some(head.latest_version + 1),
                (Some(head), PublishRule::IfChanged { first_version }) => {
                    let latest = match stored.as_ref().and_then(|stored| stored.latest) {
                        Some(bytes) => {
                            Some(self.stored_schema_version(id, head.latest_version, bytes)?)
                        }
                        None => None,
                    };
                    let same_content = latest.is_some_and(|l| &l.definition == definition);
                    let same_flags = head.retired == flags.retired && head.hidden == flags.hidden;
                    match (same_content, same_flags) {
                        (true, true) => return Ok((head.clone(), None)),
                        (true, false) => None,
                        (false, _) => Some((head.latest_version + 1).max(first_version)),
                    }
                }
            };
            let version = match (new_version, &current) {
                (Some(version), _) => version,
                (None, Some(head)) => head.latest_version,
                (None, None) => unreachable!("a flags-only change needs an existing head"),
            };
            let record = new_version.map(|version| SchemaVersionRecord {
                id: id.to_owned(),
                version,
                published_at: now,
                definition: definition.clone(),
            });
            let head = SchemaHeadRecord {
                id: id.to_owned(),
                latest_version: version,
                retired: flags.retired,
                hidden: flags.hidden,
            };
            let write = self.schema_write(&head, record.as_ref());
            Ok((head, Some(write)))
        };
        self.schema_written(self.engine().change_schema(id, &change, events))
            .await
    }

    /// Marks a schema retired. Returns `None` when there is no such schema.
    pub async fn retire_schema(
        &self,
        id: &str,
        events: &[NewEvent],
    ) -> Result<Option<SchemaHeadRecord>, StorageError> {
        let change = |stored: Option<StoredSchema<'_>>| {
            let Some(stored) = stored else {
                return Ok((None, None));
            };
            let mut head = self.stored_schema_head(id, stored.head)?;
            head.retired = true;
            let write = self.schema_write(&head, None);
            Ok((Some(head), Some(write)))
        };
        self.schema_written(self.engine().change_schema(id, &change, events))
            .await
    }

    /// Writes `bytes` as a version's record, bound as the server binds what it writes (a record the server
    /// wrote that no longer reads); test support for corruption scenarios, built only for this crate's
    /// tests and with the `test-hooks` feature (which the black-box tests turn on). It writes where the
    /// engine keeps versions, and forgets every version and head kept decoded.
    #[cfg(any(test, feature = "test-hooks"))]
    pub fn corrupt_schema_version_for_tests(
        &self,
        id: &str,
        version: u32,
        bytes: &[u8],
    ) -> Result<(), StorageError> {
        let key = schema_version_key(id, version);
        let stored = self.bound(trees::SCHEMA_VERSIONS, &key, bytes);
        self.raw_put_for_tests(trees::SCHEMA_VERSIONS, &key, Some(&stored))
    }
}

impl Store {
    /// Awaits `write`, which changes the schemas, then drops every head and version kept.
    async fn schema_written<T>(&self, write: impl std::future::Future<Output = T>) -> T {
        self.current_schema_heads
            .changed_after(self.current_schema_versions.changed_after(write))
            .await
    }

    /// What the engine writes for `head` and, when one is published, its new `version`: both bound.
    pub(crate) fn schema_write(
        &self,
        head: &SchemaHeadRecord,
        version: Option<&SchemaVersionRecord>,
    ) -> SchemaWrite {
        let id = head.id.as_bytes();
        SchemaWrite {
            head: self.bound(trees::SCHEMA_HEADS, id, &encode(head)),
            latest_version: head.latest_version,
            version: version.map(|record| {
                let key = schema_version_key(&head.id, record.version);
                self.bound(trees::SCHEMA_VERSIONS, &key, &encode(record))
            }),
        }
    }

    /// The head `stored` under `id`, checked.
    pub(crate) fn stored_schema_head(
        &self,
        id: &str,
        stored: &[u8],
    ) -> Result<SchemaHeadRecord, StorageError> {
        decode(self.unbound(trees::SCHEMA_HEADS, id.as_bytes(), stored)?)
    }

    /// Version `version` of schema `id` as `stored`, checked: a record kept under another version's key
    /// does not open.
    pub(crate) fn stored_schema_version(
        &self,
        id: &str,
        version: u32,
        stored: &[u8],
    ) -> Result<SchemaVersionRecord, StorageError> {
        let key = schema_version_key(id, version);
        decode(self.unbound(trees::SCHEMA_VERSIONS, &key, stored)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn definition(label: &str) -> SchemaDefinition {
        SchemaDefinition {
            name: Some(label.into()),
            request_type: "vob".into(),
            required_inputs: vec![],
            optional_inputs: vec![],
            follow_up: None,
            fields: vec![],
            electronic: Default::default(),
        }
    }

    async fn publishing_if_changed_keeps_the_version_of_unchanged_content(
        engine: crate::TestEngine,
    ) {
        let (_dir, store) = engine.open_temp();
        let now = chrono::Utc::now();
        let rule = PublishRule::IfChanged { first_version: 1 };
        let flags = SchemaFlags::default();
        assert_eq!(
            store
                .publish_schema("s", &definition("a"), flags, rule, now, &[])
                .await
                .unwrap()
                .latest_version,
            1
        );
        assert_eq!(
            store
                .publish_schema("s", &definition("a"), flags, rule, now, &[])
                .await
                .unwrap()
                .latest_version,
            1
        );
        let hidden = SchemaFlags {
            hidden: true,
            retired: false,
        };
        let head = store
            .publish_schema("s", &definition("a"), hidden, rule, now, &[])
            .await
            .unwrap();
        assert_eq!((head.latest_version, head.hidden), (1, true));
        assert_eq!(
            store
                .publish_schema("s", &definition("b"), hidden, rule, now, &[])
                .await
                .unwrap()
                .latest_version,
            2
        );
        let always = PublishRule::Always { first_version: 1 };
        assert_eq!(
            store
                .publish_schema("s", &definition("b"), hidden, always, now, &[])
                .await
                .unwrap()
                .latest_version,
            3
        );
        assert_eq!(
            store
                .schema_version("s", 1)
                .await
                .unwrap()
                .unwrap()
                .definition,
            definition("a")
        );
    }

    async fn retiring_keeps_the_versions_and_sets_the_flag(engine: crate::TestEngine) {
        let (_dir, store) = engine.open_temp();
        let now = chrono::Utc::now();
        store
            .publish_schema(
                "s",
                &definition("a"),
                SchemaFlags::default(),
                PublishRule::Always { first_version: 1 },
                now,
                &[],
            )
            .await
            .unwrap();
        assert!(
            store
                .retire_schema("s", &[])
                .await
                .unwrap()
                .unwrap()
                .retired
        );
        assert!(store.schema_version("s", 1).await.unwrap().is_some());
        assert!(store.retire_schema("nope", &[]).await.unwrap().is_none());
    }

    /// Heads and versions are kept in memory once read: each schema write must drop them, or a create
    /// would validate against a retired or superseded schema.
    async fn a_schema_read_before_a_write_is_read_anew_after_it(engine: crate::TestEngine) {
        let (_dir, store) = engine.open_temp();
        let now = chrono::Utc::now();
        let rule = PublishRule::Always { first_version: 1 };
        let flags = SchemaFlags::default();
        store
            .publish_schema("s", &definition("a"), flags, rule, now, &[])
            .await
            .unwrap();
        assert_eq!(
            store
                .schema_head("s")
                .await
                .unwrap()
                .unwrap()
                .latest_version,
            1
        );
        store
            .publish_schema("s", &definition("b"), flags, rule, now, &[])
            .await
            .unwrap();
        assert_eq!(
            store
                .schema_head("s")
                .await
                .unwrap()
                .unwrap()
                .latest_version,
            2
        );
        store.retire_schema("s", &[]).await.unwrap();
        assert!(store.schema_head("s").await.unwrap().unwrap().retired);
        let first = store.schema_version("s", 1).await.unwrap().unwrap();
        assert_eq!(first.definition, definition("a"));
        // Rewritten in place only by the test hook; a version read before must not answer after it.
        let mut changed = (*first).clone();
        changed.definition = definition("c");
        store
            .corrupt_schema_version_for_tests("s", 1, &encode(&changed))
            .unwrap();
        assert_eq!(
            store
                .schema_version("s", 1)
                .await
                .unwrap()
                .unwrap()
                .definition,
            definition("c")
        );
    }

    crate::on_both_engines!(
        publishing_if_changed_keeps_the_version_of_unchanged_content,
        retiring_keeps_the_versions_and_sets_the_flag,
        a_schema_read_before_a_write_is_read_anew_after_it,
    );
}
