//! Which key seals a value: the tree it lives in names its owner (a batch, a request, or the process),
//! and the owner's UUID v7 names the epoch its key derives from.

use crate::RequestId;

/// The trees whose values are sealed, each knowing which batch owns a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sealed {
    /// `requests`: a request id.
    Requests,
    /// `intake`: a batch id and a chunk number (u16).
    Intake,
    /// `deliveries`: a request id.
    Deliveries,
    /// `meta`: process settings, sealed by the system key.
    Meta,
    /// `accounts`: an account's webhook signing secret (keyed by the account id), sealed by the system key.
    AccountSecrets,
}

impl Sealed {
    pub(super) fn name(self) -> &'static str {
        match self {
            Sealed::Requests => crate::trees::REQUESTS,
            Sealed::Intake => crate::trees::INTAKE,
            Sealed::Deliveries => crate::trees::DELIVERIES,
            Sealed::Meta => crate::trees::META,
            Sealed::AccountSecrets => crate::trees::ACCOUNTS,
        }
    }

    /// Whether it is sealed by the system key, which no purge replaces, rather than by an owner's data key.
    pub(super) fn by_system_key(self) -> bool {
        matches!(self, Sealed::Meta | Sealed::AccountSecrets)
    }

    /// The owner of the key the value under `key` is sealed with: the batch its id names, or the request
    /// itself when its id names none (a few requests converted from layout 3, see `requests::alone`).
    pub(super) fn owner(self, key: &[u8]) -> Vec<u8> {
        match self {
            Sealed::Intake => key[..key.len().saturating_sub(2)].to_vec(),
            Sealed::Requests | Sealed::Deliveries => owner_of_request(key),
            Sealed::Meta | Sealed::AccountSecrets => Vec::new(),
        }
    }
}

/// The owner of a request's key: the batch its id names, whether the request is stored there or alone.
pub(crate) fn owner_of_request(key: &[u8]) -> Vec<u8> {
    let id = RequestId::from(String::from_utf8_lossy(key).into_owned());
    match id.batch_place() {
        Some((batch, _)) => batch.into_string().into_bytes(),
        None => key.to_vec(),
    }
}

/// The epoch an owner's key derives from: the hour (since 1970) of its UUID v7 timestamp, or 0 for an id
/// that carries none.
pub(crate) fn epoch_of(owner: &[u8]) -> u32 {
    std::str::from_utf8(owner)
        .ok()
        .and_then(|text| uuid::Uuid::parse_str(text).ok())
        .filter(|uuid| uuid.get_version_num() == 7)
        .and_then(|uuid| uuid.get_timestamp())
        .map(|stamp| (stamp.to_unix().0 / 3600) as u32)
        .unwrap_or(0)
}
