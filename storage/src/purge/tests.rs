use std::sync::Arc;

use super::*;
use crate::audit::{Actor, Target};
use crate::requests::tests_support::{new_batch as batch_of, scope_of};

fn event(id: &RequestId) -> NewEvent {
    NewEvent {
        at: Utc::now(),
        actor: Actor::system(),
        action: "request.purge".into(),
        target: Some(Target::new("request", id.as_str())),
        outcome: "ok".into(),
        ip: None,
        count: None,
    }
}

/// A store in `dir` holding `requests`, committed together.
async fn storing(dir: &std::path::Path, requests: &[RequestRecord]) -> Store {
    let store = Store::open(&crate::StorageConfig::embedded(dir)).unwrap();
    store
        .commit_requests(Arc::new(requests.to_vec()))
        .await
        .unwrap();
    store
}

/// Keeps `audio` as the recording `{call}.wav` of `id`'s one call, named on its record as a run does.
pub(super) async fn with_recording(store: &Store, id: &RequestId, call: &str, audio: &[u8]) {
    let name = format!("{call}.wav");
    store.keep_recording(id, &name, audio).await.unwrap();
    let call = call.to_owned();
    let at = Utc::now();
    store
        .commit_update(id, move |r| {
            r.run = Some(crate::RunRecord {
                calls: vec![crate::CallRecord {
                    id: crate::CallId::from(call.clone()),
                    seq: 1,
                    step_key: crate::StepKey::from("step-1".to_owned()),
                    attempt: 1,
                    to: "8005550123".into(),
                    number_source: crate::NumberSource::Input,
                    placed_at: at,
                    outcome: None,
                    platform: Some(crate::PlatformCallRecord {
                        platform: "retell".into(),
                        requested_at: at,
                        platform_call_id: Some("p-1".into()),
                        events: Vec::new(),
                        result: None,
                        recording_file: Some(name.clone()),
                    }),
                }],
                ..Default::default()
            })
        })
        .await
        .unwrap();
}

/// Purges `id`, its keys replaced and everything of it removed.
pub(super) async fn purge_fully(store: &Store, id: &RequestId) {
    store.purge_request(id, event(id)).await.unwrap().unwrap();
    store.finish_purges().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn purging_one_request_keeps_its_batch_mates_and_its_hours_neighbours_readable() {
    let dir = tempfile::tempdir().unwrap();
    let lone = batch_of(1);
    let three = batch_of(3);
    let all: Vec<RequestRecord> = lone.iter().chain(&three).cloned().collect();
    let store = storing(dir.path(), &all).await;
    // One member of the three gets a record of its own, as a run's start does.
    store
        .commit_update(&three[0].id, |r| r.internal_tag = Some("own".into()))
        .await
        .unwrap();
    purge_fully(&store, &lone[0].id).await;
    for member in &three {
        assert!(
            store.request(&member.id).await.unwrap().is_some(),
            "a neighbour stays readable"
        );
    }
    purge_fully(&store, &three[1].id).await;
    assert!(store.request(&three[1].id).await.unwrap().is_none());
    for member in [&three[0], &three[2]] {
        assert!(
            store.request(&member.id).await.unwrap().is_some(),
            "a batch-mate stays readable"
        );
    }
    let listed = store
        .list_batch(&scope_of(), &three[0].batch_id, None, 10)
        .await
        .unwrap();
    assert_eq!(listed.len(), 2);
    // A page of two read past the purged member's place: the member after it fills the page.
    let page = store
        .list_batch(&scope_of(), &three[0].batch_id, None, 2)
        .await
        .unwrap();
    let ids: Vec<_> = page.iter().map(|r| &r.id).collect();
    assert_eq!(ids, [&three[2].id, &three[0].id], "newest first");
    store.close().unwrap();
    drop(store);
    let store = Store::open(&crate::StorageConfig::embedded(dir.path())).unwrap();
    for member in [&three[0], &three[2]] {
        assert!(
            store.request(&member.id).await.unwrap().is_some(),
            "and after a restart"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_purged_requests_call_keeps_no_recording_and_one_kept_before_can_be_discarded() {
    let dir = tempfile::tempdir().unwrap();
    let requests = batch_of(2);
    let store = storing(dir.path(), &requests).await;
    let (purged, kept) = (&requests[0], &requests[1]);
    // Kept while its request lived, then the request purged before the recording was named on it.
    store
        .keep_recording(&purged.id, "call-a.wav", b"RIFF....")
        .await
        .unwrap();
    store
        .purge_request(&purged.id, event(&purged.id))
        .await
        .unwrap()
        .unwrap();
    store.remove_recording("call-a.wav").await.unwrap();
    assert!(store.recording("call-a.wav").await.unwrap().is_none());
    // Downloaded after the purge: nothing is written.
    assert!(matches!(
        store
            .keep_recording(&purged.id, "call-b.wav", b"RIFF....")
            .await,
        Err(StorageError::RequestMissing(_))
    ));
    assert!(store.recording("call-b.wav").await.unwrap().is_none());
    // A living request's recording is kept as before.
    store
        .keep_recording(&kept.id, "call-c.wav", b"RIFF....")
        .await
        .unwrap();
    assert_eq!(
        store.recording("call-c.wav").await.unwrap().unwrap(),
        b"RIFF...."
    );
    store.close().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_mates_recording_still_opens_after_a_purge_gave_the_batch_a_new_key() {
    let dir = tempfile::tempdir().unwrap();
    let three = batch_of(3);
    let store = storing(dir.path(), &three).await;
    let audio = b"RIFF and the rest of a call".to_vec();
    with_recording(&store, &three[0].id, "call-mate", &audio).await;
    purge_fully(&store, &three[1].id).await;

    assert_eq!(
        store.recording("call-mate.wav").await.unwrap().unwrap(),
        audio
    );
    store.close().unwrap();
    drop(store);
    // And after a new opening, from the key kept on disk.
    let store = Store::open(&crate::StorageConfig::embedded(dir.path())).unwrap();
    assert_eq!(
        store.recording("call-mate.wav").await.unwrap().unwrap(),
        audio
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_purge_removes_every_webhook_attempt_of_its_request_and_no_other() {
    let dir = tempfile::tempdir().unwrap();
    let two = batch_of(2);
    let store = storing(dir.path(), &two).await;
    let attempt = |request: &RequestRecord, attempt| crate::AttemptRecord {
        request_id: request.id.clone(),
        url: String::new(),
        at: Utc::now(),
        round: 0,
        attempt,
        status_code: Some(500),
        error: None,
        latency_ms: 3,
        redelivery: None,
    };
    for n in 1..=3 {
        store.record_attempt(&attempt(&two[0], n)).await.unwrap();
    }
    store.record_attempt(&attempt(&two[1], 1)).await.unwrap();

    purge_fully(&store, &two[0].id).await;
    assert!(store.attempts(&two[0].id).await.unwrap().is_empty());
    assert_eq!(store.attempts(&two[1].id).await.unwrap().len(), 1);
}

/// On PostgreSQL every commit is durable at once: the values a purge seals again under its batch's new
/// key, and the entry that keeps that key, commit together or not at all. Were they separate, a failure
/// (or a crash) between them would leave the batch-mates sealed under a key nothing keeps.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rekey_whose_key_cannot_be_kept_leaves_the_batch_mates_as_they_were() {
    use crate::engine::testing::admin_query;
    let choice = crate::TestEngine::Postgres.choice();
    let crate::EngineChoice::Postgres { url, .. } = &choice else {
        unreachable!()
    };
    let dir = tempfile::tempdir().unwrap();
    let config = crate::StorageConfig::embedded(dir.path()).on(choice.clone());
    let store = Store::open(&config).unwrap();
    let three = batch_of(3);
    store
        .commit_requests(Arc::new(three.clone()))
        .await
        .unwrap();
    store
        .commit_update(&three[0].id, |r| r.internal_tag = Some("own".into()))
        .await
        .unwrap();
    for statement in [
        "CREATE FUNCTION refuse_keys() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'disk full'; END $$ \
         LANGUAGE plpgsql",
        "CREATE TRIGGER refuse_keys BEFORE INSERT OR UPDATE ON switchboard_kv FOR EACH ROW \
         WHEN (NEW.tree = 'data_keys') EXECUTE FUNCTION refuse_keys()",
    ] {
        admin_query(Some(url), statement, &[]);
    }
    store
        .purge_request(&three[1].id, event(&three[1].id))
        .await
        .unwrap()
        .unwrap();
    assert!(
        store.finish_purges().await.is_err(),
        "the key cannot be kept"
    );
    store.close().unwrap();
    drop(store);

    admin_query(Some(url), "DROP TRIGGER refuse_keys ON switchboard_kv", &[]);
    // The opening finishes the purge.
    let store = Store::open(&config).unwrap();
    assert!(store.request(&three[1].id).await.unwrap().is_none());
    for mate in [&three[0], &three[2]] {
        let read = store.request(&mate.id).await.unwrap();
        assert!(read.is_some(), "a batch-mate stays readable");
    }
    assert_eq!(
        store
            .request(&three[0].id)
            .await
            .unwrap()
            .unwrap()
            .internal_tag
            .as_deref(),
        Some("own")
    );
    store.close().unwrap();
}
