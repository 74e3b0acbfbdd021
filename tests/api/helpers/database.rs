//! The test PostgreSQL server as its administrator sees it, for tests of what a database restart, another
//! node or an operator does under a running Switchboard.

pub use switchboard_storage::admin_query;

/// The name of the database in `url`.
pub fn database_name(url: &str) -> String {
    let path = url.rsplit_once('/').unwrap().1;
    path.split_once('?')
        .map_or(path, |(name, _)| name)
        .to_owned()
}
