//! Test support: what someone who can write the store, but lacks the master key, can do to it. Built only
//! for this crate's tests and with the `test-hooks` feature (which the black-box tests turn on).

use super::head::is_block;
use super::query::decode_block;
use super::{stored, AuditEvent};
use crate::engine::Tree;
use crate::{StorageError, Store};

impl Store {
    /// Rewrites the first stored block whose lines hold `from`, with `to` in its place, as plain lines,
    /// leaving every hash as it was.
    pub fn tamper_audit_for_tests(&self, from: &str, to: &str) -> Result<bool, StorageError> {
        if let Tree::Postgres(_) = &self.audit {
            for event in stored::events_after(&self.audit, 0) {
                let event = event?;
                let text = line(&event);
                if text.contains(from) {
                    self.write_row(event.seq, &text.replacen(from, to, 1), &event)?;
                    return Ok(true);
                }
            }
            return Ok(false);
        }
        for block in self.audit.iter() {
            let (key, block) = block?;
            if !is_block(&key) {
                continue;
            }
            let lines = match block.first() {
                Some(b'{') => block.to_vec(),
                _ => crate::codec::decompress("audit block", &block)?,
            };
            let text = String::from_utf8_lossy(&lines);
            if text.contains(from) {
                self.audit
                    .insert(key, text.replacen(from, to, 1).as_bytes())?;
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Changes the first event whose line holds `from` (`to` in its place) and recomputes the hash and
    /// link of that event and of every one after it, as anyone with the published algorithm can; each
    /// event keeps the MAC it had, which no one without the master key can recompute. Answers the changed
    /// event's number.
    pub fn rewrite_audit_for_tests(
        &self,
        from: &str,
        to: &str,
    ) -> Result<Option<u64>, StorageError> {
        let mut changed = None;
        let mut previous: Option<String> = None;
        if let Tree::Postgres(_) = &self.audit {
            let events: Vec<AuditEvent> =
                stored::events_after(&self.audit, 0).collect::<Result<_, _>>()?;
            for mut event in events {
                if changed.is_none() && line(&event).contains(from) {
                    event = from_line(&line(&event).replacen(from, to, 1));
                    changed = Some(event.seq);
                }
                if changed.is_some() {
                    if let Some(previous) = &previous {
                        event.prev_hash.clone_from(previous);
                    }
                    event.hash = event.computed_hash();
                    self.write_row(event.seq, &line(&event), &event)?;
                }
                previous = Some(event.hash.clone());
            }
            return Ok(changed);
        }
        for block in self.audit.iter() {
            let (key, block) = block?;
            if !is_block(&key) {
                continue;
            }
            let mut events = decode_block(&block)?;
            let mut touched = false;
            for event in &mut events {
                if changed.is_none() {
                    let line = line(event);
                    if line.contains(from) {
                        *event = from_line(&line.replacen(from, to, 1));
                        changed = Some(event.seq);
                    }
                }
                if changed.is_some() {
                    if let Some(previous) = &previous {
                        event.prev_hash.clone_from(previous);
                    }
                    event.hash = event.computed_hash();
                    touched = true;
                }
                previous = Some(event.hash.clone());
            }
            if touched {
                let lines: Vec<String> = events.iter().map(line).collect();
                self.audit.insert(key, lines.join("\n").as_bytes())?;
            }
        }
        Ok(changed)
    }

    /// Removes every event after number `keep`, as whoever deletes the log's last rows or blocks.
    pub fn truncate_audit_for_tests(&self, keep: u64) -> Result<(), StorageError> {
        if let Tree::Postgres(tree) = &self.audit {
            let keep = keep as i64;
            tree.execute_for_tests("DELETE FROM audit_events WHERE seq > $1", &[&keep])?;
            return Ok(());
        }
        for block in self.audit.iter() {
            let (key, block) = block?;
            if !is_block(&key) {
                continue;
            }
            let events = decode_block(&block)?;
            let kept: Vec<String> = events.iter().filter(|e| e.seq <= keep).map(line).collect();
            if kept.is_empty() {
                self.audit.remove(&key)?;
            } else if kept.len() < events.len() {
                self.audit.insert(key, kept.join("\n").as_bytes())?;
            }
        }
        Ok(())
    }

    /// Writes the row of event `seq` of `audit_events` anew, as whoever can write the database would.
    fn write_row(&self, seq: u64, text: &str, event: &AuditEvent) -> Result<(), StorageError> {
        let Tree::Postgres(tree) = &self.audit else {
            unreachable!("rows are PostgreSQL's");
        };
        let seq = seq as i64;
        tree.execute_for_tests(
            "UPDATE audit_events SET line = $2, hash = $3, prev_hash = $4, action = $5 WHERE seq = $1",
            &[&seq, &text, &event.hash, &event.prev_hash, &event.action],
        )?;
        Ok(())
    }

    /// The raw value under `key` in the tree `tree`, as the engine holds it.
    pub fn raw_get_for_tests(
        &self,
        tree: &str,
        key: &[u8],
    ) -> Result<Option<Vec<u8>>, StorageError> {
        if let Some(read) = self.postgres_table_for_tests(|pg| pg.raw_get_for_tests(tree, key)) {
            return read;
        }
        Ok(self.db.open_tree(tree)?.get(key)?.map(|v| v.to_vec()))
    }

    /// Writes `value` under `key` in the tree `tree` through the engine (`None` removes it), and forgets
    /// what the store keeps decoded, as a restart would.
    pub fn raw_put_for_tests(
        &self,
        tree: &str,
        key: &[u8],
        value: Option<&[u8]>,
    ) -> Result<(), StorageError> {
        let moved = || self.postgres_table_for_tests(|pg| pg.raw_put_for_tests(tree, key, value));
        let tree = self.db.open_tree(tree)?;
        let write = || match moved() {
            Some(written) => written.map(|()| None),
            None => match value {
                Some(value) => tree.insert(key, value).map_err(StorageError::from),
                None => tree.remove(key).map_err(StorageError::from),
            },
        };
        self.current_accounts.changed(|| {
            self.current_payers.changed(|| {
                self.current_schema_heads
                    .changed(|| self.current_schema_versions.changed(write))
            })
        })?;
        Ok(())
    }
}

impl Store {
    /// What `raw` answers on PostgreSQL for a tree whose rows are a table of their own.
    fn postgres_table_for_tests<T>(
        &self,
        raw: impl FnOnce(&crate::engine::postgres::Pg) -> Option<T>,
    ) -> Option<T> {
        match &self.db {
            crate::engine::Db::Postgres(pg) => raw(pg),
            crate::engine::Db::Sled(_) => None,
        }
    }
}

/// An event's stored line: its served JSON and its MAC.
fn line(event: &AuditEvent) -> String {
    let mut value = serde_json::to_value(event).expect("an event serializes");
    if let Some(mac) = &event.mac {
        value["mac"] = mac.clone().into();
    }
    value.to_string()
}

fn from_line(line: &str) -> AuditEvent {
    serde_json::from_str(line).expect("a rewritten line still reads")
}
