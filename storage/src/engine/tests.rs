//! The engine surface itself, on both engines: a transaction sees its own writes, the last write of a key
//! wins, a removal reads what it removes, and concurrent read-modify-write transactions lose no update
//! (PostgreSQL's serialization failures are run again, as sled's conflicts are).

use sled::transaction::ConflictableTransactionError;

use super::transaction;
use crate::TestEngine;

type Body = Result<(), ConflictableTransactionError<()>>;

async fn a_transaction_reads_its_own_writes_and_the_last_write_of_a_key_wins(engine: TestEngine) {
    let dir = tempfile::tempdir().unwrap();
    let store = engine.open(dir.path()).unwrap();
    let tree = &store.meta;
    tree.insert(b"gone", b"before".to_vec()).unwrap();
    transaction(&[tree], |t| -> Body {
        t[0].put(&b"k"[..], b"one".to_vec())?;
        assert_eq!(t[0].get(b"k")?.as_deref(), Some(&b"one"[..]));
        assert_eq!(
            t[0].insert(&b"k"[..], b"two".to_vec())?.as_deref(),
            Some(&b"one"[..])
        );
        assert_eq!(t[0].remove(&b"gone"[..])?.as_deref(), Some(&b"before"[..]));
        assert_eq!(t[0].get(b"gone")?, None);
        Ok(())
    })
    .unwrap();
    assert_eq!(tree.get(b"k").unwrap().as_deref(), Some(&b"two"[..]));
    assert_eq!(tree.get(b"gone").unwrap(), None);
    let aborted = transaction(&[tree], |t| -> Body {
        t[0].put(&b"k"[..], b"three".to_vec())?;
        Err(ConflictableTransactionError::Abort(()))
    });
    assert!(aborted.is_err());
    assert_eq!(
        tree.get(b"k").unwrap().as_deref(),
        Some(&b"two"[..]),
        "an aborted transaction writes nothing"
    );
}

async fn concurrent_increments_lose_no_update(engine: TestEngine) {
    let dir = tempfile::tempdir().unwrap();
    let store = engine.open(dir.path()).unwrap();
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let tree = store.meta.clone();
            std::thread::spawn(move || {
                for _ in 0..25 {
                    transaction(&[&tree], |t| -> Body {
                        let count = t[0]
                            .get(b"count")?
                            .map_or(0, |v| u32::from_be_bytes(v[..].try_into().unwrap()));
                        t[0].put(&b"count"[..], (count + 1).to_be_bytes().to_vec())?;
                        Ok(())
                    })
                    .unwrap();
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    let count = store.meta.get(b"count").unwrap().unwrap();
    assert_eq!(u32::from_be_bytes(count[..].try_into().unwrap()), 100);
}

async fn reads_made_ahead_answer_as_reads_made_then(engine: TestEngine) {
    let dir = tempfile::tempdir().unwrap();
    let store = engine.open(dir.path()).unwrap();
    let (meta, accounts) = (&store.meta, &store.accounts);
    meta.insert(b"kept", b"old".to_vec()).unwrap();
    accounts.insert(b"other tree", b"there".to_vec()).unwrap();
    let attempts = std::sync::atomic::AtomicU32::new(0);
    transaction(&[meta, accounts], |t| -> Body {
        attempts.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        t[0].put(&b"written"[..], b"mine".to_vec())?;
        for key in [&b"kept"[..], b"missing", b"written", b"kept"] {
            t[0].want(key);
        }
        t[1].want(b"other tree");
        t[0].fetch_wanted()?;
        assert_eq!(t[0].get(b"kept")?.as_deref(), Some(&b"old"[..]));
        assert_eq!(t[0].get(b"missing")?, None);
        assert_eq!(t[0].get(b"written")?.as_deref(), Some(&b"mine"[..]));
        assert_eq!(t[1].get(b"other tree")?.as_deref(), Some(&b"there"[..]));
        // A write after the read ahead is what the transaction reads from then on.
        t[0].put(&b"kept"[..], b"new".to_vec())?;
        assert_eq!(t[0].get(b"kept")?.as_deref(), Some(&b"new"[..]));
        t[0].remove(&b"missing"[..])?;
        assert_eq!(t[0].get(b"missing")?, None);
        Ok(())
    })
    .unwrap();
    assert_eq!(meta.get(b"kept").unwrap().as_deref(), Some(&b"new"[..]));
    assert_eq!(meta.get(b"written").unwrap().as_deref(), Some(&b"mine"[..]));
    assert_eq!(attempts.into_inner(), 1);
}

/// The awaited range reads answer what the iterators answer, across pages (PostgreSQL reads 16 rows,
/// then twice as many each page), either way, up to a limit.
async fn ranges_read_awaited_answer_as_ranges_iterated(engine: TestEngine) {
    let dir = tempfile::tempdir().unwrap();
    let store = engine.open(dir.path()).unwrap();
    let tree = &store.meta;
    for n in 0..100u8 {
        tree.insert([b'k', n], vec![n]).unwrap();
    }
    tree.insert(b"l", b"past the prefix".to_vec()).unwrap();
    type Pairs = Vec<(super::Bytes, super::Bytes)>;
    let iterated = |pairs: super::Iter, reverse: bool, limit: usize| -> Pairs {
        let pairs: Vec<_> = if reverse {
            pairs.rev().take(limit).collect()
        } else {
            pairs.take(limit).collect()
        };
        pairs.into_iter().map(Result::unwrap).collect()
    };
    for reverse in [false, true] {
        for limit in [0, 1, 16, 17, 40, 100, usize::MAX] {
            let whole = tree
                .read_range::<&[u8], _>(.., reverse, limit)
                .await
                .unwrap();
            assert_eq!(whole, iterated(tree.iter(), reverse, limit));
            assert_eq!(whole.len(), limit.min(101));
            let (low, high) = ([b'k', 10], [b'k', 70]);
            let inclusive = tree.read_range(low..=high, reverse, limit).await.unwrap();
            assert_eq!(inclusive, iterated(tree.range(low..=high), reverse, limit));
            let exclusive = (
                std::ops::Bound::Excluded(low),
                std::ops::Bound::Excluded(high),
            );
            let open = tree.read_range(exclusive, reverse, limit).await.unwrap();
            assert_eq!(open, iterated(tree.range(exclusive), reverse, limit));
            assert_eq!(open.len(), limit.min(59));
        }
    }
    let prefixed = tree.read_prefix(b"k").await.unwrap();
    assert_eq!(
        prefixed,
        iterated(tree.scan_prefix(b"k"), false, usize::MAX)
    );
    assert_eq!(prefixed.len(), 100);
}

/// Transactions that conflict, on PostgreSQL, are run again without a statement the server finds out of
/// place: no ROLLBACK after a COMMIT that failed (which already ended the transaction), whose
/// "there is no transaction in progress" notice was logged once per conflict under write contention.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conflicts_are_retried_without_a_rollback_outside_a_transaction() {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let store = TestEngine::Postgres.open(dir.path()).unwrap();
    let runs = Arc::new(AtomicU32::new(0));
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let (tree, runs) = (store.meta.clone(), Arc::clone(&runs));
            std::thread::spawn(move || {
                for _ in 0..25 {
                    transaction(&[&tree], |t| -> Body {
                        runs.fetch_add(1, Ordering::Relaxed);
                        let count = t[0].get(b"count")?.map_or(0, |v| v.len());
                        t[0].put(&b"count"[..], vec![0; count + 1])?;
                        Ok(())
                    })
                    .unwrap();
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    assert_eq!(store.meta.get(b"count").unwrap().unwrap().len(), 100);
    assert!(
        runs.load(Ordering::Relaxed) > 100,
        "the workers never conflicted: nothing was checked"
    );
    let notices = super::connect::NOTICES.lock().unwrap().clone();
    assert!(
        !notices
            .iter()
            .any(|n| n.contains("no transaction in progress")),
        "{notices:?}"
    );
}

crate::on_both_engines!(
    a_transaction_reads_its_own_writes_and_the_last_write_of_a_key_wins,
    concurrent_increments_lose_no_update,
    reads_made_ahead_answer_as_reads_made_then,
    ranges_read_awaited_answer_as_ranges_iterated,
);

/// A store in `dir` on the PostgreSQL database at `url`: a second call opens a second node's store on
/// the same database.
fn open_postgres(dir: &std::path::Path, url: &str) -> crate::Store {
    let engine = crate::EngineChoice::Postgres {
        url: url.to_owned(),
        ca_file: None,
    };
    crate::Store::open(&crate::StorageConfig::embedded(dir).on(engine)).unwrap()
}

/// A PostgreSQL store fenced by a lease name commits only while that name holds an unexpired lease: a
/// node that stalled past its lease cannot write beside the node that took it over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fenced_store_commits_only_while_its_holder_holds_the_lease() {
    let url = crate::fresh_postgres_database();
    let dir = tempfile::tempdir().unwrap();
    let store = open_postgres(dir.path(), &url);
    let write = |value: &[u8]| {
        transaction(&[&store.meta], |t| -> Body {
            t[0].put(&b"fenced"[..], value.to_vec())?;
            Ok(())
        })
    };
    write(b"before the fence").unwrap();
    store.fence_to("node-a");
    let lease = |sql: &str| crate::admin_query(Some(&url), sql, &[]);

    // Refused by the fence, not for another reason.
    fn fenced<T: std::fmt::Debug, E: std::fmt::Debug>(answer: Result<T, E>, when: &str) {
        let refusal = format!("{:?}", answer.expect_err(when));
        assert!(
            refusal.contains("no longer holds the orchestrator lease"),
            "{when}: {refusal}"
        );
    }
    fenced(write(b"no lease"), "no lease");
    // A write of one key, outside any transaction of the caller's, is fenced too.
    fenced(
        store.meta.insert(b"single", b"no lease".to_vec()),
        "one key",
    );
    fenced(store.meta.remove(b"fenced"), "a removal");
    lease(
        "INSERT INTO switchboard_lease (name, holder, expires_at) \
         VALUES ('orchestrator', 'node-a', now() + interval '1 minute')",
    );
    write(b"held").unwrap();
    store.meta.insert(b"single", b"held".to_vec()).unwrap();
    lease("UPDATE switchboard_lease SET expires_at = now() - interval '1 second'");
    fenced(write(b"expired"), "an expired lease");
    lease(
        "UPDATE switchboard_lease \
         SET holder = 'node-b', expires_at = now() + interval '1 minute'",
    );
    fenced(write(b"taken"), "a lease another took");
    fenced(store.meta.remove(b"single"), "a removal once taken");
    assert_eq!(
        store.meta.get(b"fenced").unwrap().as_deref(),
        Some(&b"held"[..])
    );
    assert_eq!(
        store.meta.get(b"single").unwrap().as_deref(),
        Some(&b"held"[..])
    );
}

/// A read awaited after the connection was lost connects again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_awaited_read_rides_out_a_lost_connection() {
    let url = crate::fresh_postgres_database();
    let dir = tempfile::tempdir().unwrap();
    let store = open_postgres(dir.path(), &url);
    store.meta.insert(b"kept", b"value".to_vec()).unwrap();
    crate::admin_query(
        Some(&url),
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = current_database() AND pid <> pg_backend_pid()",
        &[],
    );
    // Until the client has seen its connection end.
    std::thread::sleep(std::time::Duration::from_millis(1_000));
    let read = store.meta.get_async(b"kept").await;
    assert_eq!(read.unwrap().as_deref(), Some(&b"value"[..]));
}

/// A transaction of the old holder that began before a takeover and commits after it, over a key the new
/// holder read meanwhile, is refused: the takeover and both holders' transactions are SERIALIZABLE, so the
/// database sees the cycle and fails the old holder's commit, whose retry then meets the fence.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_spanning_a_takeover_does_not_commit_over_the_new_holders_reads() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::mpsc;

    let url = crate::fresh_postgres_database();
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = (
        open_postgres(dir.path(), &url),
        open_postgres(dir.path(), &url),
    );
    crate::admin_query(
        Some(&url),
        "INSERT INTO switchboard_lease (name, holder, expires_at) \
         VALUES ('orchestrator', 'old-holder', now() + interval '5 seconds')",
        &[],
    );
    old.fence_to("old-holder");

    // The old holder reads the key and stalls before it writes.
    let (read, was_read) = mpsc::channel();
    let (resume, resumed) = mpsc::channel::<()>();
    let stalled = AtomicBool::new(false);
    let meta = old.meta.clone();
    let old_write = std::thread::spawn(move || {
        transaction(&[&meta], |t| -> Body {
            t[0].get(b"contested")?;
            if !stalled.swap(true, Ordering::SeqCst) {
                read.send(()).unwrap();
                resumed.recv().unwrap();
            }
            t[0].put(&b"contested"[..], b"old holder".to_vec())?;
            Ok(())
        })
    });
    was_read.recv().unwrap();

    // Its lease expires; another node takes it (trying every second until then), and reads the key in a
    // transaction of its own.
    let successor = crate::LeaseHolder {
        name: "new-holder".into(),
        node_url: None,
    };
    let lease = crate::NodeLease::acquire(&url, None, successor, |_| false, |_| {}, |_| {})
        .await
        .unwrap();
    new.fence_to("new-holder");
    // Reads only: a write here could meet the old holder's reads in a shared index page and fail it
    // for that alone, passing this test whatever the lease does.
    transaction(&[&new.meta], |t| -> Body {
        assert_eq!(t[0].get(b"contested")?, None);
        Ok(())
    })
    .unwrap();

    resume.send(()).unwrap();
    let refusal = format!("{:?}", old_write.join().unwrap().unwrap_err());
    assert!(
        refusal.contains("no longer holds the orchestrator lease"),
        "{refusal}"
    );
    assert_eq!(new.meta.get(b"contested").unwrap(), None);
    lease.release();
}

/// The key check a node makes before it serves: no keyring yet is `false` and writes none; the key that
/// sealed the store opens it; another key, or none, is refused.
async fn the_key_check_writes_nothing_and_refuses_another_key(engine: crate::TestEngine) {
    use crate::seal::{KeySource, MasterKey};
    let dir = tempfile::tempdir().unwrap();
    let choice = engine.choice();
    let given = |key: &MasterKey| KeySource::Given {
        key: key.clone(),
        origin: "test".into(),
    };
    let (key, other) = (MasterKey::generate(), MasterKey::generate());
    let check = |source: &KeySource| crate::Store::check_key(dir.path(), source, &choice);
    assert!(!check(&given(&key)).unwrap(), "no keyring yet");
    assert!(!check(&given(&key)).unwrap(), "and the check made none");
    let config = crate::StorageConfig::embedded(dir.path())
        .on(choice.clone())
        .key(given(&key));
    let store = crate::Store::open(&config).unwrap();
    store.close().unwrap();
    drop(store);
    assert!(check(&given(&key)).unwrap());
    assert!(matches!(
        check(&given(&other)),
        Err(crate::StorageError::KeyRefused)
    ));
    assert!(matches!(
        check(&KeySource::BesideData),
        Err(crate::StorageError::KeyMissing(_))
    ));
}

crate::on_both_engines!(the_key_check_writes_nothing_and_refuses_another_key);
