//! Versioned record encoding.
//!
//! Every stored value is one format-version byte followed by the record's JSON, zstd-compressed for record
//! types that carry large text (`COMPRESSED`). The version byte lets a later release recognise, and
//! migrate, bytes written by an earlier one: a record type bumps `VERSION` when its shape or encoding
//! changes and teaches `upgrade` to read the older versions.

use std::cell::RefCell;

use serde::{de::DeserializeOwned, Serialize};

use crate::seal::{Sealed, Sealer};
use crate::StorageError;

/// A type that is persisted as a value in one of the trees.
pub(crate) trait Record: Serialize + DeserializeOwned {
    /// Name used in error messages.
    const KIND: &'static str;
    /// Format version written by this release.
    const VERSION: u8;
    /// Whether the JSON is stored zstd-compressed.
    const COMPRESSED: bool = false;

    /// Whether this value of a `COMPRESSED` type will soon be replaced, and is compressed at
    /// [`FAST_LEVEL`] instead: what it saves on disk lasts only until then.
    fn replaced_soon(&self) -> bool {
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

/// zstd's level for values replaced soon. In a burst of 10,000 sandbox requests (whose running records are
/// rewritten at each step), level 1 took 6.2 to 6.3 s and 5.9 to 6.3 KB of disk per finished request;
/// plain JSON 5.1 to 5.5 s and 7.6 to 8.6 KB; this level 5.1 to 6.2 s and 6.5 to 7.4 KB.
const FAST_LEVEL: i32 = -5;

thread_local! {
    // A zstd context costs an allocation of hundreds of kilobytes: one per thread, reused by every record,
    // instead of one per record. Bulk frames record their size, so reading one allocates exactly once.
    static COMPRESSOR: RefCell<zstd::bulk::Compressor<'static>> =
        RefCell::new(zstd::bulk::Compressor::new(LEVEL).expect("zstd compression context"));
    static FAST_COMPRESSOR: RefCell<zstd::bulk::Compressor<'static>> =
        RefCell::new(zstd::bulk::Compressor::new(FAST_LEVEL).expect("zstd compression context"));
    static DECOMPRESSOR: RefCell<zstd::bulk::Decompressor<'static>> =
        RefCell::new(zstd::bulk::Decompressor::new().expect("zstd decompression context"));
}

pub(crate) fn encode<R: Record>(record: &R) -> Vec<u8> {
    encode_as::<R>(record, record.replaced_soon())
}

/// The encoding of an `R` from `value`, anything that serializes to the same JSON as that record (a view
/// over borrowed parts), compressed at [`FAST_LEVEL`] when `replaced_soon`.
pub(crate) fn encode_as<R: Record>(value: &impl Serialize, replaced_soon: bool) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(128);
    bytes.push(R::VERSION);
    // Serializing plain data structs to a Vec cannot fail: no maps with non-string keys, no I/O.
    if R::COMPRESSED {
        let json = serde_json::to_vec(value).expect("record serializes to JSON");
        // Compressing into memory fails only on allocation failure.
        let compressor = if replaced_soon {
            &FAST_COMPRESSOR
        } else {
            &COMPRESSOR
        };
        let packed = compressor
            .with(|c| c.borrow_mut().compress(&json))
            .expect("zstd into memory");
        bytes.extend_from_slice(&packed);
    } else {
        serde_json::to_writer(&mut bytes, value).expect("record serializes to JSON");
    }
    bytes
}

/// The version byte of plain JSON in every compressed record type: each one's first version was plain.
const PLAIN_VERSION: u8 = 1;

/// The plain JSON encoding of an `R` (version [`PLAIN_VERSION`]) from `value`, for a compressed type's value
/// so short-lived that compressing it would cost more than it saves; read back through `upgrade`.
pub(crate) fn encode_plain<R: Record>(value: &impl Serialize) -> Vec<u8> {
    debug_assert!(R::COMPRESSED && R::VERSION != PLAIN_VERSION);
    let mut bytes = vec![PLAIN_VERSION];
    serde_json::to_writer(&mut bytes, value).expect("record serializes to JSON");
    bytes
}

/// Reads a plain JSON body: the encoding of every record type before it was compressed, for `upgrade`.
pub(crate) fn decode_json<R: Record>(body: &[u8]) -> Result<R, StorageError> {
    serde_json::from_slice(body).map_err(|e| StorageError::Corrupt {
        kind: R::KIND,
        // serde's own text quotes the offending value, which may be a patient's; where it broke is enough.
        reason: format!("{:?} JSON error at column {}", e.classify(), e.column()),
    })
}

/// `Record::upgrade` of a record type whose version 1 was plain JSON and whose current version is that
/// JSON compressed.
pub(crate) fn upgrade_from_plain<R: Record>(version: u8, body: &[u8]) -> Result<R, StorageError> {
    match version {
        PLAIN_VERSION => decode_json(body),
        other => Err(StorageError::Corrupt {
            kind: R::KIND,
            reason: format!("unknown format version {other}"),
        }),
    }
}

/// How the values of one tree are stored: as encoded, or sealed for their place.
#[derive(Clone)]
pub(crate) enum Storing {
    Plain,
    Sealed(std::sync::Arc<Sealer>, Sealed),
}

impl Storing {
    /// The stored form of `encoded`, the encoding of the value under `key`.
    pub(crate) fn store(&self, key: &[u8], encoded: Vec<u8>) -> Vec<u8> {
        match self {
            Storing::Plain => encoded,
            Storing::Sealed(sealer, tree) => sealer.seal(*tree, key, &encoded),
        }
    }

    /// The record stored as `bytes` under `key`.
    pub(crate) fn read<R: Record>(&self, key: &[u8], bytes: &[u8]) -> Result<R, StorageError> {
        match self {
            Storing::Plain => decode(bytes),
            Storing::Sealed(sealer, tree) => decode(&sealer.open(*tree, key, bytes)?),
        }
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
        return decode_json(&decompress(R::KIND, body)?);
    }
    decode_json(body)
}

/// `bytes` as one zstd frame at [`LEVEL`], with this thread's context.
pub(crate) fn compress(bytes: &[u8]) -> Vec<u8> {
    // Compressing into memory fails only on allocation failure.
    COMPRESSOR
        .with(|c| c.borrow_mut().compress(bytes))
        .expect("zstd into memory")
}

/// The bytes of one zstd frame; `kind` names what it held in the error.
pub(crate) fn decompress(kind: &'static str, frame: &[u8]) -> Result<Vec<u8>, StorageError> {
    match zstd::bulk::Decompressor::upper_bound(frame) {
        Some(size) => DECOMPRESSOR.with(|d| d.borrow_mut().decompress(frame, size)),
        // A frame that does not record its size (a streaming encoder's) is read as a stream.
        None => zstd::stream::decode_all(frame),
    }
    .map_err(|e| StorageError::Corrupt {
        kind,
        reason: format!("zstd: {e}"),
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

        fn replaced_soon(&self) -> bool {
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
    fn a_value_replaced_soon_is_compressed_at_the_fast_level_under_the_same_version() {
        // Varied enough that the two levels find different matches.
        let text = (0..300u64)
            .map(|i| {
                format!(
                    "Agent: claim {} is {}. ",
                    i * 7919 % 100_003,
                    ["paid", "denied", "pending"][(i * i % 3) as usize]
                )
            })
            .collect();
        let draft = Packed { text, draft: true };
        let json = serde_json::to_vec(&draft).unwrap();
        let bytes = encode(&draft);
        assert_eq!(bytes[0], 2);
        assert!(
            bytes.len() < json.len() / 2,
            "{} of {} bytes",
            bytes.len(),
            json.len()
        );
        let standard = zstd::bulk::Compressor::new(LEVEL)
            .unwrap()
            .compress(&json)
            .unwrap();
        let fast = zstd::bulk::Compressor::new(FAST_LEVEL)
            .unwrap()
            .compress(&json)
            .unwrap();
        assert_ne!(standard, fast, "the levels must differ for this text");
        assert_eq!(&bytes[1..], fast.as_slice());
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
