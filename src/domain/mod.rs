//! Wire strings parsed into types once, at the edge. Below the handlers nothing takes a raw `String` for
//! these concepts.

mod client_label;
mod schema_id;
mod us_phone;

pub use client_label::{ClientLabel, LabelTooLong, MAX_LABEL_BYTES};
pub use schema_id::{InvalidSchemaId, SchemaId};
pub use us_phone::UsPhone;
