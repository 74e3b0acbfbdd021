//! Statements on the test PostgreSQL server, as its administrator: what a database restart, another node
//! or an operator does to a database under a running Switchboard.

use tokio_postgres::types::ToSql;
use tokio_postgres::Row;

/// Runs `sql` with text parameters `params` on the database `url` names (the test server's own database
/// when `None`), from a thread of its own; answers the rows.
pub async fn admin_query(url: Option<&str>, sql: &'static str, params: &[&str]) -> Vec<Row> {
    let url = url.map_or_else(
        || std::env::var(switchboard_storage::POSTGRES_URL_VARIABLE).unwrap(),
        str::to_owned,
    );
    let params: Vec<String> = params.iter().map(|p| (*p).to_owned()).collect();
    actix_web::rt::task::spawn_blocking(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                .await
                .unwrap();
            tokio::spawn(connection);
            let params: Vec<&(dyn ToSql + Sync)> =
                params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
            client.query(sql, &params).await.unwrap()
        })
    })
    .await
    .unwrap()
}

/// The name of the database in `url`.
pub fn database_name(url: &str) -> String {
    let path = url.rsplit_once('/').unwrap().1;
    path.split_once('?')
        .map_or(path, |(name, _)| name)
        .to_owned()
}
