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
        store.audit.iter().count(),
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
