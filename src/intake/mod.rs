//! Request intake: turning one JSON request item into a validated, number-resolved draft ready to book,
//! after deciding whether it replays an earlier `internalId` (`replay.rs`). Everything here is synchronous
//! and writes nothing, so a rejected entry leaves no trace.

mod entry;
pub mod payer_lookup;
mod replay;

pub use entry::{prepare_entry, EntryMode, SchemaMemo};
pub use replay::{Replay, Replays};
