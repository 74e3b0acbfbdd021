//! Schemas: heads and immutable versions.

use std::sync::Arc;

use sled::transaction::ConflictableTransactionError;

use crate::audit::NewEvent;
use crate::codec::{decode, encode};
use crate::store::{PublishRule, SchemaFlags};
use crate::trees::{self, schema_version_key};
use crate::{SchemaDefinition, SchemaHeadRecord, SchemaVersionRecord, StorageError, Store};

impl Store {
    /// Reads a schema's head.
    pub async fn schema_head(&self, id: &str) -> Result<Option<SchemaHeadRecord>, StorageError> {
        let head = self
            .current_schema_heads
            .get(id, || async {
                self.schema_heads
                    .get_async(id)
                    .await?
                    .map(|bytes| {
                        decode(self.unbound(trees::SCHEMA_HEADS, id.as_bytes(), &bytes)?)
                            .map(Arc::new)
                    })
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
        let key = schema_version_key(id, version);
        // The key as text for the map: schema ids are text, and the version's bytes are kept exact.
        let kept = format!("{id}\0{version}");
        self.current_schema_versions
            .get(&kept, || async {
                self.schema_versions
                    .get_async(&key)
                    .await?
                    .map(|bytes| {
                        decode(self.unbound(trees::SCHEMA_VERSIONS, &key, &bytes)?).map(Arc::new)
                    })
                    .transpose()
            })
            .await
    }

    /// Publishes `definition` as a new version of schema `id` (version 1, or `first_version`, for a new
    /// schema; the latest plus one otherwise) and sets its flags. When `only_if_changed` is set and the
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
        let head = self.schema_written(|| {
            self.audited_if_changed(
                &[&self.schema_heads, &self.schema_versions],
                events,
                |trees| {
                    let (heads, versions) = (&trees[0], &trees[1]);
                    let current: Option<SchemaHeadRecord> = heads
                        .get(id.as_bytes())?
                        .map(|b| {
                            self.unbound(trees::SCHEMA_HEADS, id.as_bytes(), &b)
                                .and_then(decode)
                        })
                        .transpose()
                        .map_err(ConflictableTransactionError::Abort)?;
                    // The version to publish, or `None` when only the flags change.
                    let new_version = match (&current, publish) {
                        (None, PublishRule::Always { first_version })
                        | (None, PublishRule::IfChanged { first_version }) => {
                            Some(first_version.max(1))
                        }
                        (Some(head), PublishRule::Always { .. }) => Some(head.latest_version + 1),
                        (Some(head), PublishRule::IfChanged { first_version }) => {
                            let key = schema_version_key(id, head.latest_version);
                            let latest: Option<SchemaVersionRecord> = versions
                                .get(&key)?
                                .map(|b| {
                                    self.unbound(trees::SCHEMA_VERSIONS, &key, &b)
                                        .and_then(decode)
                                })
                                .transpose()
                                .map_err(ConflictableTransactionError::Abort)?;
                            let same_content = latest.is_some_and(|l| &l.definition == definition);
                            let same_flags =
                                head.retired == flags.retired && head.hidden == flags.hidden;
                            match (same_content, same_flags) {
                                (true, true) => return Ok((head.clone(), false)),
                                (true, false) => None,
                                (false, _) => Some((head.latest_version + 1).max(first_version)),
                            }
                        }
                    };
                    let latest_version = match (new_version, &current) {
                        (Some(version), _) => {
                            let record = SchemaVersionRecord {
                                id: id.to_owned(),
                                version,
                                published_at: now,
                                definition: definition.clone(),
                            };
                            let key = schema_version_key(id, version);
                            let stored = self.bound(trees::SCHEMA_VERSIONS, &key, &encode(&record));
                            versions.insert(key, stored)?;
                            version
                        }
                        (None, Some(head)) => head.latest_version,
                        (None, None) => unreachable!("a flags-only change needs an existing head"),
                    };
                    let head = SchemaHeadRecord {
                        id: id.to_owned(),
                        latest_version,
                        retired: flags.retired,
                        hidden: flags.hidden,
                    };
                    let stored = self.bound(trees::SCHEMA_HEADS, id.as_bytes(), &encode(&head));
                    heads.insert(id.as_bytes(), stored)?;
                    Ok((head, true))
                },
            )
        })?;
        self.durable().await?;
        Ok(head)
    }

    /// Marks a schema retired. Returns `None` when there is no such schema.
    pub async fn retire_schema(
        &self,
        id: &str,
        events: &[NewEvent],
    ) -> Result<Option<SchemaHeadRecord>, StorageError> {
        let head = self.schema_written(|| {
            self.audited_if_changed(&[&self.schema_heads], events, |trees| {
                let heads = &trees[0];
                let Some(bytes) = heads.get(id.as_bytes())? else {
                    return Ok((None, false));
                };
                let mut head: SchemaHeadRecord = self
                    .unbound(trees::SCHEMA_HEADS, id.as_bytes(), &bytes)
                    .and_then(decode)
                    .map_err(ConflictableTransactionError::Abort)?;
                head.retired = true;
                let stored = self.bound(trees::SCHEMA_HEADS, id.as_bytes(), &encode(&head));
                heads.insert(id.as_bytes(), stored)?;
                Ok((Some(head), true))
            })
        })?;
        self.durable().await?;
        Ok(head)
    }

    /// Writes `bytes` as a version's record, bound as the server binds what it writes (a record the server
    /// wrote that no longer reads); test support for corruption scenarios, built only for this crate's
    /// tests and with the `test-hooks` feature (which the black-box tests turn on).
    #[cfg(any(test, feature = "test-hooks"))]
    pub fn corrupt_schema_version_for_tests(
        &self,
        id: &str,
        version: u32,
        bytes: &[u8],
    ) -> Result<(), StorageError> {
        self.schema_written(|| {
            let key = schema_version_key(id, version);
            let stored = self.bound(trees::SCHEMA_VERSIONS, &key, bytes);
            self.schema_versions.insert(key, stored)
        })?;
        Ok(())
    }
}

impl Store {
    /// Runs `write`, which changes the schema trees, then drops every head and version kept.
    fn schema_written<T>(&self, write: impl FnOnce() -> T) -> T {
        self.current_schema_heads
            .changed(|| self.current_schema_versions.changed(write))
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

    #[tokio::test]
    async fn publishing_if_changed_keeps_the_version_of_unchanged_content() {
        let (_dir, store) = crate::TestEngine::Sled.open_temp();
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

    #[tokio::test]
    async fn retiring_keeps_the_versions_and_sets_the_flag() {
        let (_dir, store) = crate::TestEngine::Sled.open_temp();
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
    #[tokio::test]
    async fn a_schema_read_before_a_write_is_read_anew_after_it() {
        let (_dir, store) = crate::TestEngine::Sled.open_temp();
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
}
