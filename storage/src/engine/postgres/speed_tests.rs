//! What keeps the PostgreSQL engine fast, held in place: how often a transaction waits on the network,
//! and the lease holder answering reads of the trees it keeps from memory.

use sled::transaction::ConflictableTransactionError;

use crate::engine::{transaction, Tree};
use crate::trees;

type Body = Result<(), ConflictableTransactionError<()>>;

/// A store on a fresh database, and that database's URL.
fn store_on_postgres(dir: &std::path::Path) -> (crate::Store, String) {
    let url = crate::fresh_postgres_database();
    let engine = crate::EngineChoice::Postgres {
        url: url.clone(),
        ca_file: None,
    };
    let store = crate::Store::open(&crate::StorageConfig::embedded(dir).on(engine)).unwrap();
    (store, url)
}

/// `store` fenced to a lease it holds for a minute.
fn hold_lease(store: &crate::Store, url: &str) {
    crate::admin_query(
        Some(url),
        "INSERT INTO switchboard_lease (name, holder, expires_at) \
         VALUES ('orchestrator', 'node-a', now() + interval '1 minute')",
        &[],
    );
    store.fence_to("node-a");
}

fn exchanges(tree: &Tree) -> u64 {
    match tree {
        Tree::Postgres(tree) => tree.pg().transaction_exchanges(),
        Tree::Sled(_) => unreachable!("a PostgreSQL store"),
    }
}

/// A group of creates reads its checks ahead and writes: its BEGIN and lease check leave with the reads,
/// and its writes with the COMMIT, so it waits on the network twice, however many keys it reads and
/// writes. A transaction that only writes, unfenced, waits once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_that_reads_ahead_and_writes_waits_on_the_network_twice() {
    let dir = tempfile::tempdir().unwrap();
    let (store, url) = store_on_postgres(dir.path());
    let meta = &store.meta;
    let before = exchanges(meta);
    transaction(&[meta], |t| -> Body {
        t[0].put(&b"alone"[..], b"written".to_vec())?;
        Ok(())
    })
    .unwrap();
    assert_eq!(
        exchanges(meta) - before,
        1,
        "BEGIN, writes and COMMIT at once"
    );

    hold_lease(&store, &url);
    let before = exchanges(meta);
    transaction(&[meta], |t| -> Body {
        t[0].put(&b"fenced"[..], b"written".to_vec())?;
        Ok(())
    })
    .unwrap();
    assert_eq!(
        exchanges(meta) - before,
        1,
        "BEGIN, the lease check, writes and COMMIT at once"
    );
    let grouped = |value: &'static [u8]| {
        transaction(&[meta, &store.accounts], |t| -> Body {
            for n in 0..20u8 {
                t[0].want([b'k', n]);
                t[1].want([b'a', n]);
            }
            t[0].fetch_wanted()?;
            for n in 0..20u8 {
                assert_eq!(t[1].get([b'a', n])?, None);
                let old = t[0].get([b'k', n])?;
                assert!(old.is_none() || old.as_deref() == Some(&b"first"[..]));
                t[0].put(&[b'k', n][..], value.to_vec())?;
            }
            Ok(())
        })
    };
    let before = exchanges(meta);
    grouped(b"first").unwrap();
    grouped(b"second").unwrap();
    assert_eq!(exchanges(meta) - before, 4, "twice per transaction");
    assert_eq!(
        meta.get([b'k', 19]).unwrap().as_deref(),
        Some(&b"second"[..])
    );
    let before = exchanges(meta);
    transaction(&[meta], |_| -> Body { Ok(()) }).unwrap();
    assert_eq!(
        exchanges(meta),
        before,
        "nothing read or written: nothing sent"
    );
}

/// The node holding the lease answers reads of `requests` and `intake` from what it committed and read,
/// without a round trip: a row changed behind its back (which no other node may do while it holds the
/// lease) is not seen. Before the lease, and in the trees it does not keep, every read is the database's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lease_holder_answers_reads_of_the_trees_it_keeps_from_memory() {
    let dir = tempfile::tempdir().unwrap();
    let (store, url) = store_on_postgres(dir.path());
    let (requests, meta) = (&store.group.requests, &store.meta);
    let behind_its_back = |tree: &str, key: &str, value: &str| {
        crate::admin_query(
            Some(&url),
            "UPDATE switchboard_kv SET value = convert_to($3, 'UTF8') \
             WHERE tree = $1 AND key = convert_to($2, 'UTF8')",
            &[tree, key, value],
        );
    };
    let write = |tree: &Tree, key: &str, value: &str| {
        transaction(&[tree], |t| -> Body {
            t[0].put(key.as_bytes(), value.as_bytes().to_vec())?;
            Ok(())
        })
        .unwrap();
    };
    write(requests, "r1", "committed");
    behind_its_back(trees::REQUESTS, "r1", "changed");
    assert_eq!(
        requests.get_async("r1").await.unwrap().as_deref(),
        Some(&b"changed"[..]),
        "not holding the lease: the database answers"
    );

    hold_lease(&store, &url);
    write(requests, "r1", "committed");
    write(meta, "m1", "committed");
    behind_its_back(trees::REQUESTS, "r1", "changed");
    behind_its_back("meta", "m1", "changed");
    assert_eq!(
        requests.get_async("r1").await.unwrap().as_deref(),
        Some(&b"committed"[..]),
        "its own commit, from memory"
    );
    assert_eq!(
        meta.get_async("m1").await.unwrap().as_deref(),
        Some(&b"changed"[..]),
        "a tree it does not keep: the database answers"
    );
    // A key it had not seen is read once, then known, missing rows included.
    assert_eq!(requests.get_async("r2").await.unwrap(), None);
    crate::admin_query(
        Some(&url),
        "INSERT INTO switchboard_kv (tree, key, value) VALUES ('requests', 'r2', 'inserted')",
        &[],
    );
    assert_eq!(requests.get(b"r2").unwrap(), None, "known missing");
    // Its own commits are what it answers next, removals included.
    transaction(&[requests], |t| -> Body {
        t[0].remove(&b"r1"[..])?;
        t[0].put(&b"r2"[..], b"mine".to_vec())?;
        Ok(())
    })
    .unwrap();
    assert_eq!(requests.get(b"r1").unwrap(), None);
    assert_eq!(requests.get(b"r2").unwrap().as_deref(), Some(&b"mine"[..]));
    // A transaction that did not commit changes nothing it knows.
    let aborted = transaction(&[requests], |t| -> Body {
        t[0].put(&b"r2"[..], b"aborted".to_vec())?;
        Err(ConflictableTransactionError::Abort(()))
    });
    assert!(aborted.is_err());
    assert_eq!(requests.get(b"r2").unwrap().as_deref(), Some(&b"mine"[..]));
}

/// A group of creates on the lease holder takes the booking counts it knows and assumes new idempotency
/// keys, and the database checks both with the COMMIT: it waits on the network once. A guess the
/// database disagrees with (a key claimed, a count changed, which no other node may do while it holds
/// the lease) fails the attempt, and the next one reads: a claimed key is seen, a count loses no update.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_whose_checks_the_holder_knows_waits_once_and_a_wrong_guess_is_read_again() {
    use std::sync::atomic::{AtomicU32, Ordering};

    let dir = tempfile::tempdir().unwrap();
    let (store, url) = store_on_postgres(dir.path());
    hold_lease(&store, &url);
    let (idempotency, bookings) = (&store.group.idempotency, &store.group.bookings);
    let attempts = AtomicU32::new(0);
    let create = |key: &str| {
        transaction(&[idempotency, bookings], |t| -> Body {
            attempts.fetch_add(1, Ordering::SeqCst);
            t[0].want(key.as_bytes());
            t[1].want(b"day");
            t[0].fetch_wanted()?;
            if t[0].get(key.as_bytes())?.is_some() {
                return Err(ConflictableTransactionError::Abort(()));
            }
            let count = t[1].get(b"day")?.map_or(0, |count| count[0]);
            t[0].put(key.as_bytes(), b"request".to_vec())?;
            t[1].put(&b"day"[..], vec![count + 1])?;
            Ok(())
        })
    };
    let behind_its_back = |sql: &str| crate::admin_query(Some(&url), sql, &[]);
    let count = || bookings.get(b"day").unwrap().map(|count| count[0]);

    let before = exchanges(idempotency);
    create("first").unwrap();
    assert_eq!(
        exchanges(idempotency) - before,
        2,
        "the day's count read once"
    );
    let before = exchanges(idempotency);
    create("second").unwrap();
    assert_eq!(
        exchanges(idempotency) - before,
        1,
        "all guessed, checked with the COMMIT"
    );
    assert_eq!(count(), Some(2));

    behind_its_back(
        "INSERT INTO switchboard_kv (tree, key, value) \
         VALUES ('idempotency', convert_to('third', 'UTF8'), convert_to('other', 'UTF8'))",
    );
    attempts.store(0, Ordering::SeqCst);
    assert!(create("third").is_err(), "the key is claimed");
    assert_eq!(attempts.load(Ordering::SeqCst), 2, "guessed, then read");
    assert_eq!(count(), Some(2), "nothing of it written");

    behind_its_back(
        "UPDATE switchboard_kv SET value = '\\x0a'::bytea \
         WHERE tree = 'bookings' AND key = convert_to('day', 'UTF8')",
    );
    attempts.store(0, Ordering::SeqCst);
    create("fourth").unwrap();
    assert_eq!(attempts.load(Ordering::SeqCst), 2);
    assert_eq!(count(), Some(11), "counted from the database's 10");
}

/// Guesses lose no update: transactions on several threads that each guess the count the holder knows
/// and add one all count, whichever of them the database fails and runs again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_increments_on_guesses_lose_no_update() {
    let dir = tempfile::tempdir().unwrap();
    let (store, url) = store_on_postgres(dir.path());
    hold_lease(&store, &url);
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let bookings = store.group.bookings.clone();
            std::thread::spawn(move || {
                for _ in 0..25 {
                    transaction(&[&bookings], |t| -> Body {
                        t[0].want(b"count");
                        t[0].fetch_wanted()?;
                        let count = t[0].get(b"count")?.map_or(0, |count| count[0]);
                        t[0].put(&b"count"[..], vec![count + 1])?;
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
    assert_eq!(store.group.bookings.get(b"count").unwrap().unwrap()[0], 100);
}
