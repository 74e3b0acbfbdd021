//! Versioned record encoding.
//!
//! Every stored value is one format-version byte followed by the record's JSON. The version byte lets a
//! later release recognise, and migrate, bytes written by an earlier one: a record type bumps `VERSION`
//! when its shape changes and teaches `upgrade` to read the older versions.

use serde::{de::DeserializeOwned, Serialize};

use crate::StorageError;

/// A type that is persisted as a value in one of the trees.
pub(crate) trait Record: Serialize + DeserializeOwned {
    /// Name used in error messages.
    const KIND: &'static str;
    /// Format version written by this release.
    const VERSION: u8;

    /// Reads a body written under an older `version`. No record type has an older version yet.
    fn upgrade(version: u8, _body: &[u8]) -> Result<Self, StorageError> {
        Err(StorageError::Corrupt {
            kind: Self::KIND,
            reason: format!("unknown format version {version}"),
        })
    }
}

pub(crate) fn encode<R: Record>(record: &R) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(128);
    bytes.push(R::VERSION);
    // Serializing plain data structs to a Vec cannot fail: no maps with non-string keys, no I/O.
    serde_json::to_writer(&mut bytes, record).expect("record serializes to JSON");
    bytes
}

pub(crate) fn decode<R: Record>(bytes: &[u8]) -> Result<R, StorageError> {
    let (&version, body) = bytes.split_first().ok_or(StorageError::Corrupt {
        kind: R::KIND,
        reason: "empty value".into(),
    })?;
    if version != R::VERSION {
        return R::upgrade(version, body);
    }
    serde_json::from_slice(body).map_err(|e| StorageError::Corrupt {
        kind: R::KIND,
        reason: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Sample {
        name: String,
    }

    impl Record for Sample {
        const KIND: &'static str = "sample";
        const VERSION: u8 = 2;
    }

    #[test]
    fn a_record_round_trips_through_its_encoding() {
        let sample = Sample { name: "x".into() };
        assert_eq!(decode::<Sample>(&encode(&sample)).unwrap(), sample);
    }

    #[test]
    fn an_unknown_version_is_reported_as_corrupt_not_misread() {
        let mut bytes = encode(&Sample { name: "x".into() });
        bytes[0] = 9;
        let err = decode::<Sample>(&bytes).unwrap_err();
        assert!(
            err.to_string().contains("unknown format version 9"),
            "{err}"
        );
    }

    #[test]
    fn an_empty_value_is_corrupt() {
        assert!(matches!(
            decode::<Sample>(&[]),
            Err(StorageError::Corrupt { .. })
        ));
    }
}
