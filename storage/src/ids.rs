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
    /// A request's id: its batch's id with the request's place in the batch (from 1) in the last four hex
    /// digits ([`RequestBatchId::member`]), so the id alone finds the batch stored whole at creation.
    /// Requests created before batches were stored whole keep the plain UUID v7 their clients hold: the
    /// conversion to layout 4 stored them alone, each under its id (see `requests::alone`).
    RequestId
}

string_id! {
    /// The id of the requests of one POST booked onto the same business day: a UUID v7 (time-ordered) whose
    /// last four hex digits are zero, left for its members' places. Batches created before carry a UUID v4,
    /// and their heads name their members.
    RequestBatchId
}

/// Members of one batch at most: the places four hex digits hold, from 1.
pub const BATCH_CAPACITY: usize = 0xffff;

/// Hex digits a member's place takes at the end of its id.
const PLACE_DIGITS: usize = BATCH_ZEROS.len();

/// Where a batch's id has its members' places: a batch id ends in these zeros.
pub(crate) const BATCH_ZEROS: &str = "0000";

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

impl RequestId {
    /// The batch this request was created in and its place there, when the id is a batch member's.
    pub fn batch_place(&self) -> Option<(RequestBatchId, usize)> {
        let (stem, place) = self.member_stem()?;
        let mut batch = String::with_capacity(self.0.len());
        batch.push_str(stem);
        batch.push_str(BATCH_ZEROS);
        Some((RequestBatchId(batch), place))
    }

    /// A batch member's id without its place digits (its batch's id is this stem and zeros), and its
    /// place. Every read by id asks, so nothing here allocates.
    pub(crate) fn member_stem(&self) -> Option<(&str, usize)> {
        let id = uuid::Uuid::try_parse(&self.0).ok()?;
        // Only the canonical text maps back to the batch's key: another spelling is another id.
        let mut canonical = uuid::Uuid::encode_buffer();
        if id.get_version_num() != 7 || *id.hyphenated().encode_lower(&mut canonical) != *self.0 {
            return None;
        }
        let split = self.0.len() - PLACE_DIGITS;
        let place = usize::from_str_radix(&self.0[split..], 16).ok()?;
        if place == 0 {
            return None;
        }
        Some((&self.0[..split], place))
    }
}

/// The ids of new requests, one for each of `days` (the business day each is booked on), in that order:
/// the requests of one day share a batch, a day with more than a batch holds starts another, and each
/// request is named by its place in its batch. The store owns this layout: its records, listings and due
/// entries of a batch stand for all its members.
pub fn mint_request_ids<D: Ord + Clone>(
    days: impl IntoIterator<Item = D>,
) -> Vec<(RequestBatchId, RequestId)> {
    let mut batches: std::collections::BTreeMap<D, (RequestBatchId, usize)> = Default::default();
    days.into_iter()
        .map(|day| {
            let (batch, places) = batches
                .entry(day)
                .or_insert_with(|| (RequestBatchId::new(), 0));
            if *places == BATCH_CAPACITY {
                *batch = RequestBatchId::new();
                *places = 0;
            }
            *places += 1;
            (batch.clone(), batch.member(*places))
        })
        .collect()
}

impl RequestBatchId {
    /// A fresh id: a UUID v7 with room for [`BATCH_CAPACITY`] members.
    #[allow(
        clippy::new_without_default,
        reason = "a fresh id is minted on purpose, never by a derived default"
    )]
    pub fn new() -> RequestBatchId {
        // uuid's v7 keeps a counter above the random low bits, so ids minted in one process stay distinct
        // and ordered with those bits cleared.
        let bits = uuid::Uuid::now_v7().as_u128() & !0xffff;
        RequestBatchId(uuid::Uuid::from_u128(bits).hyphenated().to_string())
    }

    /// The id of the member at `place` (from 1 to [`BATCH_CAPACITY`]).
    pub fn member(&self, place: usize) -> RequestId {
        assert!(
            (1..=BATCH_CAPACITY).contains(&place),
            "a batch member's place is 1 to {BATCH_CAPACITY}"
        );
        let split = self.0.len().saturating_sub(PLACE_DIGITS);
        RequestId(format!("{}{place:04x}", &self.0[..split]))
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
    fn the_requests_of_a_day_share_batches_of_at_most_the_capacity_each_named_by_its_place() {
        let days = [1, 2, 1]
            .into_iter()
            .chain(std::iter::repeat_n(3, BATCH_CAPACITY + 1));
        let ids = mint_request_ids(days);
        assert_eq!(ids.len(), 3 + BATCH_CAPACITY + 1);
        assert_eq!(ids[0].0, ids[2].0, "one day, one batch");
        assert_ne!(ids[0].0, ids[1].0, "another day, another batch");
        assert_eq!(ids[2].1, ids[0].0.member(2), "named by its place");
        let third_day = &ids[3..];
        assert!(third_day[..BATCH_CAPACITY]
            .iter()
            .all(|(batch, _)| *batch == third_day[0].0));
        assert_ne!(
            third_day[BATCH_CAPACITY].0, third_day[0].0,
            "a full batch starts another"
        );
        assert_eq!(
            third_day[BATCH_CAPACITY].1,
            third_day[BATCH_CAPACITY].0.member(1)
        );
        for (batch, id) in &ids {
            assert_eq!(id.batch_place().map(|(b, _)| b), Some(batch.clone()));
        }
    }

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
        assert_eq!(version(RequestBatchId::new().as_str()), 7);
    }

    #[test]
    fn a_member_id_names_its_batch_and_place_and_other_ids_name_none() {
        let batch = RequestBatchId::new();
        assert!(batch.as_str().ends_with("0000"));
        let member = batch.member(1);
        assert_eq!(member.batch_place(), Some((batch.clone(), 1)));
        assert_eq!(
            batch.member(BATCH_CAPACITY).batch_place(),
            Some((batch.clone(), BATCH_CAPACITY))
        );
        assert_eq!(
            uuid::Uuid::parse_str(member.as_str())
                .unwrap()
                .get_version_num(),
            7
        );
        // The batch itself, another spelling, an old v4 id and a word are not members of anything.
        assert_eq!(RequestId::from(batch.as_str()).batch_place(), None);
        assert_eq!(
            RequestId::from(member.as_str().to_uppercase()).batch_place(),
            None
        );
        assert_eq!(
            RequestId::from(uuid::Uuid::new_v4().to_string()).batch_place(),
            None
        );
        assert_eq!(RequestId::from("r1").batch_place(), None);
    }

    #[test]
    fn batch_ids_minted_together_differ() {
        let ids: std::collections::HashSet<_> =
            (0..10_000).map(|_| RequestBatchId::new()).collect();
        assert_eq!(ids.len(), 10_000);
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
