use super::*;
use crate::group::Txn;

/// A job that writes its tag into a shared log when settled.
struct Tagged(usize, Arc<Mutex<Vec<usize>>>);

fn tagged(tag: usize, log: &Arc<Mutex<Vec<usize>>>) -> Box<dyn Job> {
    Box::new(Tagged(tag, Arc::clone(log)))
}

impl Job for Tagged {
    fn apply(&mut self, _: &Txn) -> Result<(), sled::transaction::UnabortableTransactionError> {
        Ok(())
    }
    fn fail(self: Box<Self>, _: StorageError) {}
    fn settle(self: Box<Self>, _: Result<(), StorageError>) {
        self.1.lock().unwrap().push(self.0);
    }
}

/// A store of its own in a temporary directory, flushed only by a flusher.
fn temporary_db() -> (tempfile::TempDir, sled::Db) {
    let dir = tempfile::tempdir().unwrap();
    let db = sled::Config::new()
        .path(dir.path())
        .flush_every_ms(None)
        .open()
        .unwrap();
    (dir, db)
}

/// The grouped trees of `engine`, with a keyring of their own in `dir`.
fn group_trees(engine: &crate::engine::Db, dir: &tempfile::TempDir) -> GroupTrees {
    let home = crate::seal::Home::Dir(dir.path().into());
    let keyring = crate::seal::Keyring::create(&home, &crate::seal::MasterKey::generate()).unwrap();
    GroupTrees::open(engine, Arc::new(crate::seal::Sealer::new(keyring))).unwrap()
}

/// The tags of a group, in its order.
fn tags(jobs: Vec<Box<dyn Job>>, log: &Arc<Mutex<Vec<usize>>>) -> Vec<usize> {
    for job in jobs {
        job.settle(Ok(()));
    }
    std::mem::take(&mut *log.lock().unwrap())
}

#[test]
fn a_group_takes_clients_writes_first_and_at_most_max_group_jobs() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut demand = Demand::default();
    for tag in 0..MAX_GROUP {
        demand.queued.push_back(tagged(tag, &log));
    }
    demand.urgent.push_back(tagged(10_000, &log));
    demand.urgent.push_back(tagged(10_001, &log));
    let first = tags(demand.next_group(), &log);
    assert_eq!(first.len(), MAX_GROUP);
    assert_eq!(&first[..3], &[10_000, 10_001, 0]);
    let second = tags(demand.next_group(), &log);
    assert_eq!(second, vec![MAX_GROUP - 2, MAX_GROUP - 1]);
    assert!(demand.is_idle());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_share_flushes_and_all_become_durable() {
    let (dir, db) = temporary_db();
    let engine = crate::engine::Db::Sled(db.clone());
    let flusher = Arc::new(Flusher::start(engine.clone(), group_trees(&engine, &dir)));
    let mut tasks = Vec::new();
    for i in 0..200u32 {
        let db = db.clone();
        let flusher = Arc::clone(&flusher);
        tasks.push(tokio::spawn(async move {
            db.insert(i.to_be_bytes(), vec![1u8; 64]).unwrap();
            flusher.durable().await.unwrap();
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let flushes = flusher.stats().flushes;
    assert!(
        (1..200).contains(&flushes),
        "200 writers should share flushes, saw {flushes}"
    );
}

/// Waits until `log` holds `count` tags.
fn settled(log: &Arc<Mutex<Vec<usize>>>, count: usize) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while log.lock().unwrap().len() < count {
        assert!(Instant::now() < deadline, "never settled: {:?}", log);
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn after_a_shared_group_a_write_queued_while_the_flusher_lingers_joins_the_next_group() {
    let (dir, db) = temporary_db();
    let engine = crate::engine::Db::Sled(db.clone());
    let flusher = Flusher::start(engine.clone(), group_trees(&engine, &dir));
    let log = Arc::new(Mutex::new(Vec::new()));
    {
        let mut demand = flusher.shared.demand.lock().unwrap();
        demand.urgent.push_back(tagged(1, &log));
        demand.urgent.push_back(tagged(2, &log));
        flusher.shared.wake.notify_one();
    }
    settled(&log, 2);
    flusher.submit(tagged(3, &log), Lane::Client);
    // Well inside the linger, well past the time the flusher takes to wake for the first write.
    std::thread::sleep(LINGER / 8);
    flusher.submit(tagged(4, &log), Lane::Background);
    settled(&log, 4);
    let sizes = flusher.group_sizes();
    assert_eq!(
        (sizes.get_sample_count(), sizes.get_sample_sum()),
        (2, 4.0),
        "two groups of two"
    );
}

#[test]
fn the_blocking_wait_returns_after_a_flush() {
    let (dir, db) = temporary_db();
    let engine = crate::engine::Db::Sled(db.clone());
    let flusher = Flusher::start(engine.clone(), group_trees(&engine, &dir));
    db.insert(b"k", b"v").unwrap();
    flusher.durable_blocking().unwrap();
    assert_eq!(flusher.stats().flushes, 1);
    assert_eq!(flusher.latency().get_sample_count(), 1);
}

#[test]
fn waiting_after_shutdown_reports_closed() {
    let (dir, db) = temporary_db();
    let engine = crate::engine::Db::Sled(db.clone());
    let flusher = Flusher::start(engine.clone(), group_trees(&engine, &dir));
    flusher.shutdown();
    assert!(matches!(
        flusher.durable_blocking(),
        Err(StorageError::Closed)
    ));
}
