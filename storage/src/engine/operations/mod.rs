//! The seam between the store and its engines: Switchboard's operations, not a key/value store's. The
//! store seals, binds, decodes and caches what it keeps; an engine keeps the bytes it is handed and keeps
//! each operation's invariants (an API key names one account; a change and its audit events commit
//! together) in its own way: sled with trees and group commit, PostgreSQL with tables and SQL.
//!
//! [`Operations`] is one trait made of a part per family of records, each in a file of its own here.
//! Every write returns once durable, and appends its audit events in the same transaction, only when it
//! changed something. No engine type appears in a signature. Families move behind it one at a time; what
//! is not here yet is still written against [`super::Tree`] (ARCHITECTURE.md says which).

mod accounts;
mod operators;
mod payers;
mod schemas;
mod settings;
mod webhook_attempts;

pub(crate) use accounts::{AccountChange, AccountEntry, Accounts, KeyEntry};
pub(crate) use operators::{named_in, OperatorEntry, Operators, TokenEntry, TokenHolder, TokenOf};
pub(crate) use payers::Payers;
pub(crate) use schemas::{SchemaChange, SchemaWrite, Schemas, StoredSchema};
pub(crate) use settings::{ClockMove, Settings, MANUAL_CLOCK, PROVISIONED, TOKEN_SECRET};
pub use webhook_attempts::AttemptEntry;
pub(crate) use webhook_attempts::WebhookAttempts;

use super::embedded::Embedded;
use super::postgres::tables::Tables;

/// Everything an engine does for the store.
pub(crate) trait Operations:
    Accounts + Operators + Payers + Schemas + Settings + WebhookAttempts
{
}

impl<E> Operations for E where
    E: Accounts + Operators + Payers + Schemas + Settings + WebhookAttempts
{
}

/// Both engines carry out every operation, and the store reaches them through [`Engine`] alone.
const _: fn() = || {
    fn carries_out_every_operation<E: Operations>() {}
    carries_out_every_operation::<Embedded<'_>>();
    carries_out_every_operation::<Tables<'_>>();
    carries_out_every_operation::<Engine<'_>>();
};

/// The engine a store runs on, as the operations see it.
pub(crate) enum Engine<'a> {
    Sled(Embedded<'a>),
    Postgres(Tables<'a>),
}

/// Forwards an operation to the engine's own.
macro_rules! on_engine {
    ($self:ident, $engine:ident => $call:expr) => {
        match $self {
            Engine::Sled($engine) => $call.await,
            Engine::Postgres($engine) => $call.await,
        }
    };
}
pub(crate) use on_engine;

impl crate::Store {
    /// The engine under this store, for its operations.
    pub(crate) fn engine(&self) -> Engine<'_> {
        match &self.db {
            super::Db::Sled(_) => Engine::Sled(Embedded(self)),
            super::Db::Postgres(pg) => Engine::Postgres(Tables {
                pg,
                chain: &self.group.chain,
            }),
        }
    }
}
