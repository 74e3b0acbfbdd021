use super::*;

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
    let store = Store::open(dir.path()).unwrap();
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
        .unwrap()
        .events
        .len()
        < 4
    {
        assert!(Instant::now() < deadline, "reads never written");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(store.audit_verify().unwrap(), Verified::Holds { events: 4 });

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
    assert_eq!(store.audit_verify().unwrap(), Verified::BrokenAt { seq: 4 });
    store.close().unwrap();
    drop(store);

    // The head is read back at the next opening: new events follow the last one.
    let store = Store::open(dir.path()).unwrap();
    store
        .audit_now(vec![event("operator.delete", "a")])
        .await
        .unwrap();
    let page = store.audit_page(&AuditFilter::default(), 4, 10).unwrap();
    assert_eq!(page.events[0].seq, 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_events_of_one_transaction_are_stored_in_bounded_blocks_and_chain_across_them() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
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
        store.audit_verify().unwrap(),
        Verified::Holds { events: 2500 }
    );
    let page = store.audit_page(&AuditFilter::default(), 1500, 10).unwrap();
    assert_eq!(page.events[0].seq, 1501);
    assert_eq!(page.next_after, Some(1510));
}

/// A store on `engine` opened again on the same database (PostgreSQL) or directory.
fn reopen(dir: &std::path::Path, choice: &crate::EngineChoice) -> Result<Store, StorageError> {
    Store::open_on(
        dir,
        crate::DEFAULT_CACHE_BYTES,
        &crate::seal::KeySource::BesideData,
        choice,
    )
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
    assert_eq!(store.audit_verify().unwrap(), Verified::Holds { events: 3 });
}

async fn an_event_rewritten_with_its_hashes_recomputed_breaks_the_chain_where_it_is(
    engine: crate::TestEngine,
) {
    let (_dir, store) = engine.open_temp();
    three_events(&store).await;
    // Whoever can write the store can recompute every SHA-256 after the change, but not the MACs.
    let changed = store.rewrite_audit_for_tests("\"b\"", "\"z\"").unwrap();
    assert_eq!(changed, Some(2));
    assert_eq!(store.audit_verify().unwrap(), Verified::BrokenAt { seq: 2 });
}

async fn removing_the_last_events_breaks_the_chain_where_they_were(engine: crate::TestEngine) {
    let (_dir, store) = engine.open_temp();
    three_events(&store).await;
    store.truncate_audit_for_tests(1).unwrap();
    assert_eq!(store.audit_verify().unwrap(), Verified::BrokenAt { seq: 2 });
    // Every block gone: the sealed head still names three events.
    store.truncate_audit_for_tests(0).unwrap();
    assert_eq!(store.audit_verify().unwrap(), Verified::BrokenAt { seq: 1 });
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
    let checkpoint = store.audit_checkpoint().unwrap().unwrap();
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
            .unwrap(),
        Verified::Holds { events: 4 }
    );
    // Whatever the store holds is rolled back to before the checkpoint, head included (as a copy of the
    // store made earlier would be): only the checkpoint, kept outside, tells.
    let mut earlier = checkpoint.clone();
    earlier.hash = "0".repeat(64);
    assert_eq!(
        store.audit_verify_with(&[earlier]).unwrap(),
        Verified::BrokenAt { seq: 3 },
        "the event at the checkpoint differs"
    );
    store.truncate_audit_for_tests(2).unwrap();
    assert_eq!(
        store.audit_verify_with(&[checkpoint]).unwrap(),
        Verified::BrokenAt { seq: 3 }
    );
}

crate::on_both_engines!(
    an_event_rewritten_with_its_hashes_recomputed_breaks_the_chain_where_it_is,
    removing_the_last_events_breaks_the_chain_where_they_were,
    a_store_whose_audit_log_was_emptied_head_included_does_not_open,
    a_checkpoint_verifies_until_an_event_up_to_it_changes_or_goes,
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_of_an_earlier_release_are_checked_by_hash_and_anchored_by_migrate() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = Store::open(dir.path()).unwrap();
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
    .unwrap()
    .unwrap();
    assert_eq!(upgrade.bound.unwrap().unkeyed_events, 3);
    let store = Store::open(dir.path()).unwrap();
    assert!(store.sealer.keyring.bound());
    assert_eq!(store.audit_verify().unwrap(), Verified::Holds { events: 3 });
    store
        .audit_now(vec![event("operator.delete", "a")])
        .await
        .unwrap();
    assert_eq!(store.audit_verify().unwrap(), Verified::Holds { events: 4 });
    // An unkeyed event changed, and the hashes after it recomputed: the anchor no longer matches.
    store.rewrite_audit_for_tests("\"a\"", "\"y\"").unwrap();
    assert!(matches!(
        store.audit_verify().unwrap(),
        Verified::BrokenAt { seq } if seq <= 3
    ));
}
