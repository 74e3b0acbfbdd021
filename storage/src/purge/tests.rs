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
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn purging_one_request_keeps_its_batch_mates_and_its_hours_neighbours_readable() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let lone = batch_of(1);
    let three = batch_of(3);
    let all: Vec<RequestRecord> = lone.iter().chain(&three).cloned().collect();
    store.commit_requests(Arc::new(all)).await.unwrap();
    // One member of the three gets a record of its own, as a run's start does.
    store
        .commit_update(&three[0].id, |r| r.internal_tag = Some("own".into()))
        .await
        .unwrap();
    store
        .purge_request(&lone[0].id, event(&lone[0].id))
        .await
        .unwrap()
        .unwrap();
    store.finish_purges().unwrap();
    for member in &three {
        assert!(
            store.request(&member.id).unwrap().is_some(),
            "a neighbour stays readable"
        );
    }
    store
        .purge_request(&three[1].id, event(&three[1].id))
        .await
        .unwrap()
        .unwrap();
    store.finish_purges().unwrap();
    assert!(store.request(&three[1].id).unwrap().is_none());
    for member in [&three[0], &three[2]] {
        assert!(
            store.request(&member.id).unwrap().is_some(),
            "a batch-mate stays readable"
        );
    }
    let listed = store
        .list_batch(&scope_of(), &three[0].batch_id, None, 10)
        .unwrap();
    assert_eq!(listed.len(), 2);
    store.close().unwrap();
    drop(store);
    let store = Store::open(dir.path()).unwrap();
    for member in [&three[0], &three[2]] {
        assert!(
            store.request(&member.id).unwrap().is_some(),
            "and after a restart"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_purged_requests_call_keeps_no_recording_and_one_kept_before_can_be_discarded() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let requests = batch_of(2);
    store
        .commit_requests(Arc::new(requests.clone()))
        .await
        .unwrap();
    let (purged, kept) = (&requests[0], &requests[1]);
    // Kept while its request lived, then the request purged before the recording was named on it.
    store
        .keep_recording(&purged.id, "call-a.wav", b"RIFF....")
        .unwrap();
    store
        .purge_request(&purged.id, event(&purged.id))
        .await
        .unwrap()
        .unwrap();
    store.discard_recording("call-a.wav").unwrap();
    assert!(store.recording("call-a.wav").unwrap().is_none());
    // Downloaded after the purge: nothing is written.
    assert!(matches!(
        store.keep_recording(&purged.id, "call-b.wav", b"RIFF...."),
        Err(StorageError::RequestMissing(_))
    ));
    assert!(store.recording("call-b.wav").unwrap().is_none());
    // A living request's recording is kept as before.
    store
        .keep_recording(&kept.id, "call-c.wav", b"RIFF....")
        .unwrap();
    assert_eq!(store.recording("call-c.wav").unwrap().unwrap(), b"RIFF....");
    store.close().unwrap();
}
