//! The JSON wire format: outgoing shapes (`...Out`) and the formatting rules they share. Storage records
//! are converted here, so the on-disk format and the wire format can evolve separately.

mod calls;
mod request;
mod schemas;
mod time;

pub use request::{created_out, request_out, PayerLookupOut, ReadContext, ReadKind};
pub use schemas::{
    FieldListOut, RequiredInputsOut, ResultsFieldOut, SchemaDetailOut, SchemaRowOut,
};
pub use time::format_timestamp;
