//! The engine suite: every operation of [`super::operations::Operations`], called through the store's
//! [`super::operations::Engine`] on sled and on PostgreSQL alike (`on_both_engines!`), one file per family.
//! A family that moves behind the trait brings its tests here.

pub(crate) mod accounts;
mod operators;
mod payers;
mod schemas;
mod settings;
mod webhook_attempts;

use crate::audit::{Actor, AuditFilter, NewEvent, Target};
use crate::Store;

/// An audit event of a change to `id`.
fn change_of(id: &str) -> NewEvent {
    NewEvent {
        at: chrono::Utc::now(),
        actor: Actor::operator("suite"),
        action: "account.change".into(),
        target: Some(Target::new("account", id)),
        outcome: "ok".into(),
        ip: None,
        count: None,
    }
}

/// The actions of the audit log, oldest first.
async fn audited(store: &Store) -> Vec<String> {
    let page = store
        .audit_page(&AuditFilter::default(), 0, 1_000)
        .await
        .unwrap();
    page.events.into_iter().map(|event| event.action).collect()
}

/// A fresh PostgreSQL database, by URL, and the configuration of a store on it, its keyring's place in
/// the directory returned (kept while the directory is).
fn on_a_fresh_database() -> (String, crate::StorageConfig, tempfile::TempDir) {
    let url = crate::engine::testing::fresh_postgres_database();
    let dir = tempfile::tempdir().unwrap();
    let choice = crate::EngineChoice::Postgres {
        url: url.clone(),
        ca_file: None,
    };
    let config = crate::StorageConfig::embedded(dir.path()).on(choice);
    (url, config, dir)
}

/// Rows the database at `url` still keeps in `switchboard_kv` for `trees`.
fn kv_rows_left(url: &str, trees: &[&str]) -> i64 {
    let trees = trees
        .iter()
        .map(|tree| format!("'{tree}'"))
        .collect::<Vec<_>>()
        .join(", ");
    let sql = format!("SELECT count(*) FROM switchboard_kv WHERE tree IN ({trees})");
    crate::engine::testing::admin_query(Some(url), &sql, &[])[0].get(0)
}

/// A store on the database at `url`, of schema version 3, is refused, naming `switchboard migrate`, until
/// the migration brings it from version 3.
fn refused_until_migrated(url: &str, config: &crate::StorageConfig) {
    let refused = Store::open(config)
        .err()
        .expect("a version 3 database is refused");
    assert!(
        refused.to_string().contains("switchboard migrate"),
        "{refused}"
    );
    assert_eq!(crate::migrate_postgres(url, None).unwrap(), Some(3));
}
