//! A snapshot file sled had not finished writing (the process was killed while opening or stopping) must not
//! keep the store from opening: sled reads the highest-sorting `snap.` file, unfinished ones included.

use switchboard_storage::Store;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_opens_over_a_snapshot_left_unfinished() {
    let dir = tempfile::tempdir().unwrap();
    let secret = {
        let store = Store::open(&switchboard_storage::StorageConfig::embedded(dir.path())).unwrap();
        let secret = store.token_secret_or_init(|| vec![7; 32]).await.unwrap();
        store.close().unwrap();
        secret
    };
    // Opening again writes a snapshot of what the first run wrote.
    let prepared = Store::prepare_next_start(
        &switchboard_storage::EngineChoice::Sled,
        dir.path(),
        1 << 20,
        std::time::Duration::ZERO,
    );
    assert!(prepared.unwrap(), "sled writes a snapshot");
    let torn = switchboard_storage::sled_dir(dir.path()).join("snap.FFFFFFFFFFFFFFFF.generating");
    std::fs::write(&torn, b"a snapshot cut off mid-write").unwrap();

    let store = Store::open(&switchboard_storage::StorageConfig::embedded(dir.path())).unwrap();
    assert_eq!(
        store.token_secret_or_init(|| vec![9; 32]).await.unwrap(),
        secret
    );
    assert!(!torn.exists());
}
