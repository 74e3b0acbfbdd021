//! Request intake: turning one JSON request item into a validated, number-resolved draft ready to book.
//! Everything here is synchronous and writes nothing, so a rejected entry leaves no trace.

mod entry;
pub mod payer_lookup;

pub use entry::{prepare_entry, EntryMode, Prepared, SchemaMemo};
