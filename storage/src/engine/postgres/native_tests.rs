//! The engine's own transactions when their caller goes away.

use std::time::Duration;

use tokio_postgres::types::Type;

use crate::engine::operations::Engine;
use crate::engine::testing::admin_query;

/// A caller dropped between BEGIN and COMMIT (a client gone, an actor stopped) leaves nothing open on
/// the connection it took: the next transaction on it commits only its own writes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_whose_caller_went_away_commits_nothing() {
    let choice = crate::TestEngine::Postgres.choice();
    let crate::EngineChoice::Postgres { url, .. } = &choice else {
        unreachable!()
    };
    let dir = tempfile::tempdir().unwrap();
    let store =
        crate::Store::open(&crate::StorageConfig::embedded(dir.path()).on(choice.clone())).unwrap();
    let Engine::Postgres(tables) = store.engine() else {
        unreachable!()
    };
    let abandoned = tables.pg.audited(tables.chain, &[], |conn| async move {
        let sql = "INSERT INTO settings (name, record) VALUES ('left-open', '\\x00')";
        conn.client.execute_typed(sql, &[]).await?;
        futures::future::pending::<()>().await;
        Ok(((), true))
    });
    let gone = tokio::time::timeout(Duration::from_millis(300), abandoned).await;
    assert!(gone.is_err(), "the caller gave up");
    tokio::time::sleep(Duration::from_millis(200)).await;

    for n in 0..3 {
        tables
            .pg
            .audited(tables.chain, &[], |conn| async move {
                let sql = "INSERT INTO settings (name, record) VALUES ($1, '\\x00')";
                let name = format!("committed-{n}");
                conn.client
                    .execute_typed(sql, &[(&name, Type::TEXT)])
                    .await?;
                Ok(((), true))
            })
            .await
            .unwrap();
    }
    let rows = admin_query(Some(url), "SELECT name FROM settings ORDER BY name", &[]);
    let names: Vec<String> = rows.iter().map(|row| row.get(0)).collect();
    assert_eq!(names, ["committed-0", "committed-1", "committed-2"]);
    store.close().unwrap();
}
