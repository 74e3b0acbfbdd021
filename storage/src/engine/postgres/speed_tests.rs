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
