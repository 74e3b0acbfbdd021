use super::*;
use crate::engine::Tree;

fn event(action: &'static str, id: &str) -> NewEvent {
    NewEvent {
        at: "2026-11-23T14:00:00Z".parse().unwrap(),
        actor: Actor::operator("alice"),
        action: action.into(),
        target: Some(Target::new("request", id)),
        outcome: "ok".into(),
        ip: None,
        count: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_join_the_next_group_and_an_altered_event_breaks_the_chain_where_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&crate::StorageConfig::embedded(dir.path())).unwrap();
    store
        .audit_now(vec![
            event("operator.create", "a"),
            event("operator.create", "b"),
        ])
        .await
        .unwrap();
    store.audit_read(event("request.read", "r1"));
    store.audit_read(event("request.read", "r2"));
    // Within their delay, with nothing else written.
    let deadline = Instant::now() + Duration::from_secs(3);
    while store
        .audit_page(&AuditFilter::default(), 0, 10)
        .await
        .unwrap()
        .events
        .len()
        < 4
    {
        assert!(Instant::now() < deadline, "reads never written");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        store.audit_verify().await.unwrap(),
        Verified::Holds { events: 4 }
    );

    // A block rewritten with one event's target changed: the chain breaks at that event. The block is
    // compressed; it goes back as plain lines, the form of blocks written before compression, which
    // read all the same.
    let (key, block) = store.audit.iter().nth(1).unwrap().unwrap();
    assert!(
        !block.windows(4).any(|w| w == b"\"r2\""),
        "blocks are stored compressed"
    );
    let lines = crate::codec::decompress("audit block", &block).unwrap();
    let altered = String::from_utf8(lines)
        .unwrap()
        .replacen("\"r2\"", "\"r9\"", 1);
    store.audit.insert(key, altered.as_bytes()).unwrap();
    assert_eq!(
        store.audit_verify().await.unwrap(),
        Verified::BrokenAt { seq: 4 }
    );
    store.close().unwrap();
    drop(store);

    // The head is read back at the next opening: new events follow the last one.
    let store = Store::open(&crate::StorageConfig::embedded(dir.path())).unwrap();
    store
        .audit_now(vec![event("operator.delete", "a")])
        .await
        .unwrap();
    let page = store
        .audit_page(&AuditFilter::default(), 4, 10)
        .await
        .unwrap();
    assert_eq!(page.events[0].seq, 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_events_of_one_transaction_are_stored_in_bounded_blocks_and_chain_across_them() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&crate::StorageConfig::embedded(dir.path())).unwrap();
    let events = (0..2500)
        .map(|i| event("request.read", &format!("r{i}")))
        .collect();
    store.audit_now(events).await.unwrap();
    assert_eq!(
        store
            .audit
            .iter()
            .keys()
            .filter(|key| head::is_block(key.as_ref().unwrap()))
            .count(),
        10,
        "nine blocks of 256 events and one of 196"
    );
    assert_eq!(
        store.audit_verify().await.unwrap(),
        Verified::Holds { events: 2500 }
    );
    let page = store
        .audit_page(&AuditFilter::default(), 1500, 10)
        .await
        .unwrap();
    assert_eq!(page.events[0].seq, 1501);
    assert_eq!(page.next_after, Some(1510));
}

/// A store on `engine` opened again on the same database (PostgreSQL) or directory.
fn reopen(dir: &std::path::Path, choice: &crate::EngineChoice) -> Result<Store, StorageError> {
    Store::open(&crate::StorageConfig::embedded(dir).on(choice.clone()))
}

async fn three_events(store: &Store) {
    store
        .audit_now(vec![
            event("operator.create", "a"),
            event("operator.create", "b"),
            event("operator.create", "c"),
        ])
        .await
        .unwrap();
    assert_eq!(
        store.audit_verify().await.unwrap(),
        Verified::Holds { events: 3 }
    );
}

async fn an_event_rewritten_with_its_hashes_recomputed_breaks_the_chain_where_it_is(
    engine: crate::TestEngine,
) {
    let (_dir, store) = engine.open_temp();
    three_events(&store).await;
    // Whoever can write the store can recompute every SHA-256 after the change, but not the MACs.
    let changed = store.rewrite_audit_for_tests("\"b\"", "\"z\"").unwrap();
    assert_eq!(changed, Some(2));
    assert_eq!(
        store.audit_verify().await.unwrap(),
        Verified::BrokenAt { seq: 2 }
    );
}

async fn removing_the_last_events_breaks_the_chain_where_they_were(engine: crate::TestEngine) {
    let (_dir, store) = engine.open_temp();
    three_events(&store).await;
    store.truncate_audit_for_tests(1).unwrap();
    assert_eq!(
        store.audit_verify().await.unwrap(),
        Verified::BrokenAt { seq: 2 }
    );
    // Every block gone: the sealed head still names three events.
    store.truncate_audit_for_tests(0).unwrap();
    assert_eq!(
        store.audit_verify().await.unwrap(),
        Verified::BrokenAt { seq: 1 }
    );
}

async fn a_store_whose_audit_log_was_emptied_head_included_does_not_open(
    engine: crate::TestEngine,
) {
    let dir = tempfile::tempdir().unwrap();
    let choice = engine.choice();
    let store = reopen(dir.path(), &choice).unwrap();
    three_events(&store).await;
    let keys: Vec<_> = store.audit.iter().keys().map(|k| k.unwrap()).collect();
    for key in keys {
        store
            .raw_put_for_tests(crate::trees::AUDIT, &key, None)
            .unwrap();
    }
    store.close().unwrap();
    drop(store);
    let refused = reopen(dir.path(), &choice).err().expect("refused");
    assert!(
        matches!(refused, StorageError::AuditTampered(_)),
        "{refused}"
    );
    assert!(refused.to_string().contains("audit log"), "{refused}");
}

async fn a_checkpoint_verifies_until_an_event_up_to_it_changes_or_goes(engine: crate::TestEngine) {
    let (_dir, store) = engine.open_temp();
    three_events(&store).await;
    let checkpoint = store.audit_checkpoint().await.unwrap().unwrap();
    assert_eq!(checkpoint.seq, 3);
    assert!(store.audit_checkpoint_holds(&checkpoint));
    let mut forged = checkpoint.clone();
    forged.seq = 2;
    assert!(
        !store.audit_checkpoint_holds(&forged),
        "a forged checkpoint"
    );
    store
        .audit_now(vec![event("operator.delete", "a")])
        .await
        .unwrap();
    assert_eq!(
        store
            .audit_verify_with(std::slice::from_ref(&checkpoint))
            .await
            .unwrap(),
        Verified::Holds { events: 4 }
    );
    // Whatever the store holds is rolled back to before the checkpoint, head included (as a copy of the
    // store made earlier would be): only the checkpoint, kept outside, tells.
    let mut earlier = checkpoint.clone();
    earlier.hash = "0".repeat(64);
    assert_eq!(
        store.audit_verify_with(&[earlier]).await.unwrap(),
        Verified::BrokenAt { seq: 3 },
        "the event at the checkpoint differs"
    );
    store.truncate_audit_for_tests(2).unwrap();
    assert_eq!(
        store.audit_verify_with(&[checkpoint]).await.unwrap(),
        Verified::BrokenAt { seq: 3 }
    );
}

/// The log as it stands: its sealed head and its length, what a copy of the store taken now holds.
struct Earlier {
    head: Vec<u8>,
    seq: u64,
}

fn earlier_log(store: &Store) -> Earlier {
    Earlier {
        head: store
            .raw_get_for_tests(crate::trees::AUDIT, super::head::HEAD_KEY)
            .unwrap()
            .expect("a sealed head"),
        seq: store.group.chain.head().seq,
    }
}

/// Puts the log back as `earlier` had it, head included, as a store rolled back whole would.
fn roll_back_audit(store: &Store, earlier: &Earlier) {
    store.truncate_audit_for_tests(earlier.seq).unwrap();
    store
        .raw_put_for_tests(
            crate::trees::AUDIT,
            super::head::HEAD_KEY,
            Some(&earlier.head),
        )
        .unwrap();
}

fn closed(store: Store) {
    store.close().unwrap();
    drop(store);
}

fn assert_refused_as_rolled_back(refused: StorageError, says: &str) {
    assert!(
        matches!(refused, StorageError::AuditTampered(_)),
        "{refused}"
    );
    assert!(refused.to_string().contains(says), "{refused}");
}

/// A closed store on `engine` with four events, and the log as it stood after the first three.
async fn four_events_remembering_three(
    engine: crate::TestEngine,
) -> (tempfile::TempDir, crate::EngineChoice, Earlier) {
    let dir = tempfile::tempdir().unwrap();
    let choice = engine.choice();
    let store = reopen(dir.path(), &choice).unwrap();
    three_events(&store).await;
    let earlier = earlier_log(&store);
    store
        .audit_now(vec![event("operator.delete", "a")])
        .await
        .unwrap();
    closed(store);
    (dir, choice, earlier)
}

async fn a_log_rolled_back_head_included_is_refused_by_the_nodes_mark(engine: crate::TestEngine) {
    let (dir, choice, earlier) = four_events_remembering_three(engine).await;
    let store = reopen(dir.path(), &choice).unwrap();
    // The sealed head rolled back with the log is consistent with it: only the mark, outside, tells.
    roll_back_audit(&store, &earlier);
    assert_eq!(
        store.audit_verify().await.unwrap(),
        Verified::BrokenAt { seq: 4 },
        "verify while serving"
    );
    closed(store);
    let refused = reopen(dir.path(), &choice).err().expect("refused");
    assert_refused_as_rolled_back(refused, "ends at event 3, before event 4");
}

async fn a_log_rolled_back_then_written_again_past_the_mark_is_refused(engine: crate::TestEngine) {
    let (dir, choice, earlier) = four_events_remembering_three(engine).await;
    let mark_path = dir.path().join(super::mark::FILE);
    let mark_at_four = std::fs::read(&mark_path).unwrap();
    let store = reopen(dir.path(), &choice).unwrap();
    roll_back_audit(&store, &earlier);
    closed(store);
    // Another node, which never saw event 4, runs on the rolled-back log and writes past it.
    std::fs::remove_file(&mark_path).unwrap();
    let store = reopen(dir.path(), &choice).unwrap();
    store
        .audit_now(vec![
            event("operator.create", "x"),
            event("operator.create", "y"),
        ])
        .await
        .unwrap();
    closed(store);
    std::fs::write(&mark_path, mark_at_four).unwrap();
    let refused = reopen(dir.path(), &choice).err().expect("refused");
    assert_refused_as_rolled_back(refused, "differs at event 4");
}

crate::on_both_engines!(
    a_log_rolled_back_head_included_is_refused_by_the_nodes_mark,
    a_log_rolled_back_then_written_again_past_the_mark_is_refused,
    an_event_rewritten_with_its_hashes_recomputed_breaks_the_chain_where_it_is,
    removing_the_last_events_breaks_the_chain_where_they_were,
    a_store_whose_audit_log_was_emptied_head_included_does_not_open,
    a_checkpoint_verifies_until_an_event_up_to_it_changes_or_goes,
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_of_an_earlier_release_are_checked_by_hash_and_anchored_by_migrate() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = Store::open(&crate::StorageConfig::embedded(dir.path())).unwrap();
        three_events(&store).await;
        // As an earlier release left it: events without MACs, no sealed head, a keyring not bound.
        let blocks: Vec<_> = store.audit.iter().map(|e| e.unwrap()).collect();
        for (key, block) in blocks {
            if key.len() != 8 {
                store.audit.remove(&key).unwrap();
                continue;
            }
            let lines: Vec<String> = query::decode_block(&block)
                .unwrap()
                .iter()
                .map(|e| serde_json::to_string(e).unwrap())
                .collect();
            store
                .audit
                .insert(key, lines.join("\n").as_bytes())
                .unwrap();
        }
        store.keyring_at_layout_for_tests(0).unwrap();
        store.close().unwrap();
    }
    let upgrade = Store::migrate(
        dir.path(),
        crate::DEFAULT_CACHE_BYTES,
        &crate::seal::KeySource::BesideData,
        &crate::EngineChoice::Sled,
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(upgrade.bound.unwrap().unkeyed_events, 3);
    let store = Store::open(&crate::StorageConfig::embedded(dir.path())).unwrap();
    assert!(store.sealer.keyring.bound());
    assert_eq!(
        store.audit_verify().await.unwrap(),
        Verified::Holds { events: 3 }
    );
    store
        .audit_now(vec![event("operator.delete", "a")])
        .await
        .unwrap();
    assert_eq!(
        store.audit_verify().await.unwrap(),
        Verified::Holds { events: 4 }
    );
    // An unkeyed event changed, and the hashes after it recomputed: the anchor no longer matches.
    store.rewrite_audit_for_tests("\"a\"", "\"y\"").unwrap();
    assert!(matches!(
        store.audit_verify().await.unwrap(),
        Verified::BrokenAt { seq } if seq <= 3
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_sled_a_log_rolled_back_with_its_mark_removed_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let choice = crate::EngineChoice::Sled;
    let store = reopen(dir.path(), &choice).unwrap();
    three_events(&store).await;
    closed(store);
    // From the opening that finds the mark on, every head written says a mark exists.
    let store = reopen(dir.path(), &choice).unwrap();
    store
        .audit_now(vec![event("operator.delete", "a")])
        .await
        .unwrap();
    let earlier = earlier_log(&store);
    store
        .audit_now(vec![event("operator.delete", "b")])
        .await
        .unwrap();
    closed(store);
    let store = reopen(dir.path(), &choice).unwrap();
    roll_back_audit(&store, &earlier);
    closed(store);
    std::fs::remove_file(dir.path().join(super::mark::FILE)).unwrap();
    let refused = reopen(dir.path(), &choice).err().expect("refused");
    assert_refused_as_rolled_back(refused, "is gone while the log's sealed head says");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mark_written_without_the_master_key_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let choice = crate::EngineChoice::Sled;
    let store = reopen(dir.path(), &choice).unwrap();
    three_events(&store).await;
    closed(store);
    let path = dir.path().join(super::mark::FILE);
    let mut stored = std::fs::read(&path).unwrap();
    // A later event named, the tag left as it was.
    let text = String::from_utf8_lossy(&stored[..stored.len() - 32]).replace("3", "9");
    stored.splice(..stored.len() - 32, text.into_bytes());
    std::fs::write(&path, stored).unwrap();
    let refused = reopen(dir.path(), &choice).err().expect("refused");
    assert_refused_as_rolled_back(refused, "was not written with this store's master key");
}

/// A store on a fresh PostgreSQL database, with its URL.
fn on_postgres(dir: &std::path::Path) -> (String, Store) {
    let url = crate::engine::testing::fresh_postgres_database();
    let choice = crate::EngineChoice::Postgres {
        url: url.clone(),
        ca_file: None,
    };
    (url, reopen(dir, &choice).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_each_event_is_a_row_of_audit_events_a_dba_can_query() {
    let dir = tempfile::tempdir().unwrap();
    let (url, store) = on_postgres(dir.path());
    three_events(&store).await;
    store.audit_read(event("request.read", "r-1"));
    store.audit_now(vec![]).await.unwrap();
    let rows = crate::engine::testing::admin_query(
        Some(&url),
        "SELECT seq, action, actor_kind, actor_id, target_kind, target_id, outcome, prev_hash, hash, \
         to_char(at AT TIME ZONE 'UTC', 'YYYY') FROM audit_events ORDER BY seq",
        &[],
    );
    let actions: Vec<String> = rows.iter().map(|row| row.get(1)).collect();
    assert_eq!(
        actions,
        [
            "operator.create",
            "operator.create",
            "operator.create",
            "request.read"
        ]
    );
    let served = store
        .audit_page(&crate::audit::AuditFilter::default(), 0, 10)
        .await
        .unwrap()
        .events;
    for (row, event) in rows.iter().zip(&served) {
        assert_eq!(row.get::<_, i64>(0) as u64, event.seq);
        assert_eq!(row.get::<_, String>(2), event.actor.kind);
        assert_eq!(row.get::<_, String>(3), event.actor.id);
        assert_eq!(
            row.get::<_, Option<String>>(5),
            event.target.as_ref().map(|t| t.id.clone())
        );
        assert_eq!(row.get::<_, String>(6), event.outcome);
        assert_eq!(row.get::<_, String>(7), event.prev_hash);
        assert_eq!(row.get::<_, String>(8), event.hash);
        assert_eq!(row.get::<_, String>(9), &event.at[..4]);
    }
    // The blocks of the key/value table hold none of it: the sealed head alone.
    let kv = crate::engine::testing::admin_query(
        Some(&url),
        "SELECT count(*) FROM switchboard_kv WHERE tree = 'audit'",
        &[],
    );
    assert_eq!(kv[0].get::<_, i64>(0), 1);
    assert_eq!(
        store.audit_verify().await.unwrap(),
        Verified::Holds { events: 4 }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_a_role_that_may_only_insert_audit_events_serves_and_cannot_change_them() {
    let dir = tempfile::tempdir().unwrap();
    let url = crate::engine::testing::fresh_postgres_database();
    let role = format!("app_{}", uuid::Uuid::new_v4().simple());
    let database = url
        .rsplit('/')
        .next()
        .unwrap()
        .split('?')
        .next()
        .unwrap()
        .to_owned();
    for statement in [
        format!("CREATE ROLE {role} LOGIN PASSWORD 'app-password'"),
        format!("GRANT CONNECT ON DATABASE {database} TO {role}"),
        format!(
            "GRANT SELECT, INSERT, UPDATE, DELETE ON switchboard_kv, switchboard_schema, \
             switchboard_lease, accounts, credential_keys, schema_heads, schema_versions, payers, \
             webhook_attempts, operators, operator_tokens, settings TO {role}"
        ),
        format!("GRANT USAGE ON SEQUENCE switchboard_ids TO {role}"),
        format!("GRANT SELECT, INSERT ON audit_events TO {role}"),
    ] {
        crate::engine::testing::admin_query(Some(&url), &statement, &[]);
    }
    let (scheme, rest) = url.split_once("://").unwrap();
    let (_, host) = rest.split_once('@').unwrap_or(("", rest));
    let as_app = format!("{scheme}://{role}:app-password@{host}");
    let choice = crate::EngineChoice::Postgres {
        url: as_app.clone(),
        ca_file: None,
    };
    let store = reopen(dir.path(), &choice).unwrap();
    three_events(&store).await;
    assert_eq!(
        store.audit_verify().await.unwrap(),
        Verified::Holds { events: 3 }
    );
    let Tree::Postgres(tree) = &store.audit else {
        unreachable!("a PostgreSQL store");
    };
    for forbidden in [
        "UPDATE audit_events SET action = 'nothing' WHERE seq = 1",
        "DELETE FROM audit_events WHERE seq = 3",
        "TRUNCATE audit_events",
    ] {
        let refused = tree.execute_for_tests(forbidden, &[]).expect_err(forbidden);
        assert!(
            refused.to_string().contains("permission denied"),
            "{forbidden}: {refused}"
        );
    }
    assert_eq!(
        store.audit_verify().await.unwrap(),
        Verified::Holds { events: 3 }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_moves_the_blocks_of_an_earlier_schema_into_audit_events_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let (url, store) = on_postgres(dir.path());
    three_events(&store).await;
    closed(store);
    // As schema 2 kept them: the lines in one block of the key/value table, under its first number.
    let lines: Vec<String> = crate::engine::testing::admin_query(
        Some(&url),
        "SELECT line FROM audit_events ORDER BY seq",
        &[],
    )
    .iter()
    .map(|row| row.get(0))
    .collect();
    let block = lines.join("\n");
    crate::engine::testing::admin_query(
        Some(&url),
        "INSERT INTO switchboard_kv (tree, key, value) VALUES ('audit', '\\x0000000000000001', \
         convert_to($1, 'UTF8'))",
        &[&block],
    );
    for statement in [
        "DROP TABLE audit_events",
        "UPDATE switchboard_schema SET version = 2",
    ] {
        crate::engine::testing::admin_query(Some(&url), statement, &[]);
    }
    let choice = crate::EngineChoice::Postgres {
        url: url.clone(),
        ca_file: None,
    };
    let refused = reopen(dir.path(), &choice)
        .err()
        .expect("an older schema is refused");
    assert!(
        refused.to_string().contains("switchboard migrate"),
        "{refused}"
    );
    assert_eq!(crate::migrate_postgres(&url, None).unwrap(), Some(2));
    let store = reopen(dir.path(), &choice).unwrap();
    assert_eq!(
        store.audit_verify().await.unwrap(),
        Verified::Holds { events: 3 }
    );
    let moved = crate::engine::testing::admin_query(
        Some(&url),
        "SELECT (SELECT count(*) FROM audit_events), \
         (SELECT count(*) FROM switchboard_kv WHERE tree = 'audit' AND length(key) = 8)",
        &[],
    );
    assert_eq!(
        (moved[0].get::<_, i64>(0), moved[0].get::<_, i64>(1)),
        (3, 0)
    );
}
