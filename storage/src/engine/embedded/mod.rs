//! The sled engine's operations: trees written in sled transactions, grouped writes flushed together,
//! decoded caches and snapshots beside them. It works through the store's trees and its flusher, which
//! are sled's alone once every family has moved behind [`super::operations::Operations`].

mod accounts;
mod operators;
mod payers;
mod schemas;
mod settings;
mod webhook_attempts;

/// The sled engine, as the store that holds its trees.
pub(crate) struct Embedded<'a>(pub(crate) &'a crate::Store);

impl Embedded<'_> {
    fn sled(&self) -> &sled::Db {
        match &self.0.db {
            super::Db::Sled(db) => db,
            super::Db::Postgres(_) => unreachable!("the sled engine runs on sled"),
        }
    }
}
