//! Versioned record encoding.
//!
//! Every stored value is one format-version byte followed by the record's JSON, zstd-compressed for record
//! types that carry large text (`COMPRESSED`) unless the value says it is kept plain. The version byte lets a later release recognise, and
//! migrate, bytes written by an earlier one: a record type bumps `VERSION` when its shape or encoding
//! changes and teaches `upgrade` to read the older versions.

use std::cell::RefCell;

use serde::{de::DeserializeOwned, Serialize};

use crate::StorageError;

/// A type that is persisted as a value in one of the trees.
pub(crate) trait Record: Serialize + DeserializeOwned {
    /// Name used in error messages.
    const KIND: &'static str;
    /// Format version written by this release.
    const VERSION: u8;
    /// Whether the JSON is stored zstd-compressed.
    const COMPRESSED: bool = false;
    /// The version a value of a `COMPRESSED` type is written under when [`Record::kept_plain`]: its body is
    /// plain JSON, which `upgrade` must read.
    const PLAIN_VERSION: u8 = Self::VERSION;

    /// Whether this value of a `COMPRESSED` type is stored as plain JSON instead: one rewritten soon after
    /// may not be worth compressing.
    fn kept_plain(&self) -> bool {
        false
    }

    /// Reads a body written under an older `version`. No record type has an older version yet.
    fn upgrade(version: u8, _body: &[u8]) -> Result<Self, StorageError> {
        Err(StorageError::Corrupt {
            kind: Self::KIND,
            reason: format!("unknown format version {version}"),
        })
    }
}

/// zstd's level for stored records: its fastest standard level already halves request JSON, and every
/// create and orchestration step pays for it.
const LEVEL: i32 = 1;

thread_local! {
    // A zstd context costs an allocation of hundreds of kilobytes: one per thread, reused by every record,
    // instead of one per record. Bulk frames record their size, so reading one allocates exactly once.
    static COMPRESSOR: RefCell<zstd::bulk::Compressor<'static>> =
        RefCell::new(zstd::bulk::Compressor::new(LEVEL).expect("zstd compression context"));
    static DECOMPRESSOR: RefCell<zstd::bulk::Decompressor<'static>> =
        RefCell::new(zstd::bulk::Decompressor::new().expect("zstd decompression context"));
}

pub(crate) fn encode<R: Record>(record: &R) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(128);
    let compressed = R::COMPRESSED && !record.kept_plain();
    bytes.push(if compressed {
        R::VERSION
    } else {
        R::PLAIN_VERSION
    });
    // Serializing plain data structs to a Vec cannot fail: no maps with non-string keys, no I/O.
    if compressed {
        let json = serde_json::to_vec(record).expect("record serializes to JSON");
        // Compressing into memory fails only on allocation failure.
        let packed = COMPRESSOR
            .with(|c| c.borrow_mut().compress(&json))
            .expect("zstd into memory");
        bytes.extend_from_slice(&packed);
    } else {
        serde_json::to_writer(&mut bytes, record).expect("record serializes to JSON");
    }
    bytes
}

/// Reads a plain JSON body: the encoding of every record type before it was compressed, for `upgrade`.
pub(crate) fn decode_json<R: Record>(body: &[u8]) -> Result<R, StorageError> {
    serde_json::from_slice(body).map_err(|e| StorageError::Corrupt {
        kind: R::KIND,
        reason: e.to_string(),
    })
}

/// `Record::upgrade` of a record type whose version 1 was plain JSON and whose current version is that
/// JSON compressed.
pub(crate) fn upgrade_from_plain<R: Record>(version: u8, body: &[u8]) -> Result<R, StorageError> {
    match version {
        1 => decode_json(body),
        other => Err(StorageError::Corrupt {
            kind: R::KIND,
            reason: format!("unknown format version {other}"),
        }),
    }
}

pub(crate) fn decode<R: Record>(bytes: &[u8]) -> Result<R, StorageError> {
    let (&version, body) = bytes.split_first().ok_or(StorageError::Corrupt {
        kind: R::KIND,
        reason: "empty value".into(),
    })?;
    if version != R::VERSION {
        return R::upgrade(version, body);
    }
    if R::COMPRESSED {
        let json = match zstd::bulk::Decompressor::upper_bound(body) {
            Some(size) => DECOMPRESSOR.with(|d| d.borrow_mut().decompress(body, size)),
            // A frame that does not record its size (a streaming encoder's) is read as a stream.
            None => zstd::stream::decode_all(body),
        }
        .map_err(|e| StorageError::Corrupt {
            kind: R::KIND,
            reason: format!("zstd: {e}"),
        })?;
        return decode_json(&json);
    }
    decode_json(body)
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

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Packed {
        text: String,
        #[serde(default)]
        draft: bool,
    }

    impl Record for Packed {
        const KIND: &'static str = "packed";
        const VERSION: u8 = 2;
        const COMPRESSED: bool = true;
        const PLAIN_VERSION: u8 = 1;

        fn kept_plain(&self) -> bool {
            self.draft
        }

        fn upgrade(version: u8, body: &[u8]) -> Result<Self, StorageError> {
            upgrade_from_plain(version, body)
        }
    }

    #[test]
    fn a_compressed_record_round_trips_smaller_and_reads_its_older_plain_form() {
        let packed = Packed {
            text: "Agent: thank you for calling. ".repeat(100),
            draft: false,
        };
        let bytes = encode(&packed);
        assert_eq!(bytes[0], 2);
        assert!(bytes.len() < 300, "{} bytes", bytes.len());
        assert_eq!(decode::<Packed>(&bytes).unwrap(), packed);
        let mut old = vec![1];
        old.extend_from_slice(&serde_json::to_vec(&packed).unwrap());
        assert_eq!(decode::<Packed>(&old).unwrap(), packed);
    }

    #[test]
    fn a_value_kept_plain_is_written_as_plain_json_under_its_plain_version() {
        let draft = Packed {
            text: "Agent: thank you for calling. ".repeat(100),
            draft: true,
        };
        let bytes = encode(&draft);
        assert_eq!(bytes[0], 1);
        assert_eq!(
            serde_json::from_slice::<Packed>(&bytes[1..]).unwrap(),
            draft
        );
        assert_eq!(decode::<Packed>(&bytes).unwrap(), draft);
    }

    #[test]
    fn an_empty_value_is_corrupt() {
        assert!(matches!(
            decode::<Sample>(&[]),
            Err(StorageError::Corrupt { .. })
        ));
    }
}
