//! The identifiers of a request's life: [`RequestId`], [`RequestBatchId`], [`CallId`] and [`StepKey`].
//!
//! Each kind is its own type, so one can't be passed where another is expected. They are strings on disk
//! and on the wire (`#[serde(transparent)]`), byte for byte what was stored before they had types, and
//! they take any text: an id read from a path or an old record is looked up, never rejected for its shape.
//! Minting lives here too, so every id of a kind is made the same way. How ids are documented in the API
//! is the API layer's business (`#[schema(value_type = String)]` on its fields).

use std::borrow::Borrow;
use std::fmt;

use serde::{Deserialize, Serialize};

macro_rules! string_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// The id as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The id's bytes, as keys hold them.
            pub fn as_bytes(&self) -> &[u8] {
                self.0.as_bytes()
            }

            /// The id's text, owned.
            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        // `Hash` and `Eq` are the inner string's, so maps keyed by the id can be searched by `&str`.
        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl From<String> for $name {
            fn from(text: String) -> $name {
                $name(text)
            }
        }

        impl From<&str> for $name {
            fn from(text: &str) -> $name {
                $name(text.to_owned())
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                &self.0 == other
            }
        }
    };
}

string_id! {
    /// A request's id: a UUID v7 (time-ordered), as `GET /v1/requests/{requestId}` takes it.
    RequestId
}

string_id! {
    /// The id of the requests of one POST booked onto the same business day: a UUID v4.
    RequestBatchId
}

string_id! {
    /// A call's id (a redial is another call): a UUID v7. Voice platforms and agents carry it as the
    /// call's tag, and recording links name it.
    CallId
}

string_id! {
    /// A step's key, unique within its request: `step-1` for the primary step, `step-2` for a follow-up.
    StepKey
}

impl RequestId {
    /// A fresh id.
    #[allow(
        clippy::new_without_default,
        reason = "a fresh id is minted on purpose, never by a derived default"
    )]
    pub fn new() -> RequestId {
        RequestId(uuid::Uuid::now_v7().to_string())
    }
}

impl RequestBatchId {
    /// A fresh id.
    #[allow(
        clippy::new_without_default,
        reason = "a fresh id is minted on purpose, never by a derived default"
    )]
    pub fn new() -> RequestBatchId {
        RequestBatchId(uuid::Uuid::new_v4().to_string())
    }
}

impl CallId {
    /// A fresh id.
    #[allow(
        clippy::new_without_default,
        reason = "a fresh id is minted on purpose, never by a derived default"
    )]
    pub fn new() -> CallId {
        CallId(uuid::Uuid::now_v7().to_string())
    }
}

impl StepKey {
    /// The key of a request's `number`th step, from 1: `step-1`, `step-2`.
    pub fn numbered(number: usize) -> StepKey {
        StepKey(format!("step-{number}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_its_bare_string_in_json() {
        let id = RequestId::from("0190f5e2-7c1a-7d3e-9f00-1a2b3c4d5e6f");
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(json, r#""0190f5e2-7c1a-7d3e-9f00-1a2b3c4d5e6f""#);
        assert_eq!(serde_json::from_str::<RequestId>(&json).unwrap(), id);
    }

    #[test]
    fn minted_ids_are_uuids_of_the_version_each_kind_has_always_used() {
        let version = |text: &str| uuid::Uuid::parse_str(text).unwrap().get_version_num();
        assert_eq!(version(RequestId::new().as_str()), 7);
        assert_eq!(version(CallId::new().as_str()), 7);
        assert_eq!(version(RequestBatchId::new().as_str()), 4);
    }

    #[test]
    fn step_keys_are_numbered_from_one() {
        assert_eq!(StepKey::numbered(1), "step-1");
        assert_eq!(StepKey::numbered(2).to_string(), "step-2");
    }

    #[test]
    fn a_map_keyed_by_id_is_searched_by_text() {
        let running = std::collections::HashSet::from([CallId::from("c1")]);
        assert!(running.contains("c1"));
    }
}
