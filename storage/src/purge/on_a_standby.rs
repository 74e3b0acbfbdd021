//! A standby reads what the holder's purges sealed again under new keys: the purged request's batch-mates
//! and their recordings (a new batch key), the hour's later requests (a new epoch key), its other owners
//! (their data keys kept in `data_keys`), and a batch given a new key twice.

use super::tests::{purge_fully, with_recording};
use crate::requests::tests_support::new_batch as batch_of;
use crate::seal::{KeySource, MasterKey};
use crate::{EngineChoice, RequestRecord, StorageConfig, Store};

/// Whether `store` reads each of `requests` back as it was created (member records only).
async fn reads_back(store: &Store, requests: &[&RequestRecord]) {
    for request in requests {
        let read = store.request(&request.id).await.unwrap();
        assert_eq!(
            read.map(|read| read.id),
            Some(request.id.clone()),
            "{} reads",
            request.id
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_standby_opens_what_the_holders_purges_sealed_again_under_new_keys() {
    let engine = EngineChoice::Postgres {
        url: crate::fresh_postgres_database(),
        ca_file: None,
    };
    let key = KeySource::Given {
        key: MasterKey::generate(),
        origin: "the test".into(),
    };
    let (holder_dir, standby_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let config = |dir: &std::path::Path| {
        StorageConfig::embedded(dir)
            .on(engine.clone())
            .key(key.clone())
    };
    let holder = Store::open(&config(holder_dir.path())).unwrap();
    let (three, two) = (batch_of(3), batch_of(2));
    let all: Vec<RequestRecord> = three.iter().chain(&two).cloned().collect();
    holder
        .commit_requests(std::sync::Arc::new(all))
        .await
        .unwrap();
    let audio = b"RIFF and the rest of a call".to_vec();
    with_recording(&holder, &three[0].id, "call-mate", &audio).await;
    let standby = Store::open(&config(standby_dir.path()).standby()).unwrap();
    // The standby derives the keys it reads with from the hour's epoch key, as held at its opening.
    reads_back(&standby, &[&three[0], &three[1], &three[2], &two[0]]).await;
    assert_eq!(
        standby.recording("call-mate.wav").await.unwrap(),
        Some(audio.clone())
    );

    // `three` gets a new key and its values are sealed again; `two` keeps its key, now kept in
    // `data_keys`; the hour's epoch key is replaced.
    purge_fully(&holder, &three[1].id).await;
    assert!(standby.request(&three[1].id).await.unwrap().is_none());
    reads_back(&standby, &[&three[0], &three[2], &two[0]]).await;
    assert_eq!(
        standby.recording("call-mate.wav").await.unwrap(),
        Some(audio.clone())
    );
    // Sealed under the hour's new epoch key (unless the hour turned meanwhile).
    let later = batch_of(2);
    holder
        .commit_requests(std::sync::Arc::new(later.clone()))
        .await
        .unwrap();
    reads_back(&standby, &[&later[0], &later[1]]).await;
    // The epoch key read again no longer opens `two`, whose kept key the standby reads then.
    reads_back(&standby, &[&two[0], &two[1]]).await;

    // A second purge gives `two` a new key under another vault, and replaces the first vault's key.
    purge_fully(&holder, &two[1].id).await;
    assert!(standby.request(&two[1].id).await.unwrap().is_none());
    reads_back(&standby, &[&two[0], &three[0], &three[2], &later[0]]).await;
    assert_eq!(
        standby.recording("call-mate.wav").await.unwrap(),
        Some(audio)
    );
    standby.close().unwrap();
    holder.close().unwrap();
}
