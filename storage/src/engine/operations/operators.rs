//! Operators and the index from a token's SHA-256 digest to the operator it names.

use super::{on_engine, Engine};
use crate::audit::NewEvent;
use crate::StorageError;

/// An operator as an engine keeps it: its bound record, and its token's bound index entry (the name under
/// the digest's MAC).
pub(crate) struct OperatorEntry {
    pub(crate) name: String,
    pub(crate) record: Vec<u8>,
    pub(crate) token: TokenEntry,
}

/// One entry of the token index: the digest, the operator it names in the clear, and the bound entry.
pub(crate) struct TokenEntry {
    pub(crate) digest: String,
    pub(crate) operator: String,
    pub(crate) record: Vec<u8>,
}

/// What a token's digest finds: its bound index entry, and the bound record of the operator whose name
/// the entry carries in the clear. Neither is checked: the store checks that both are bound and name
/// each other.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TokenHolder {
    pub(crate) token: Vec<u8>,
    pub(crate) operator: Option<Vec<u8>>,
}

/// The token digest of an operator, given its bound record as stored: checked and decoded by the store.
pub(crate) type TokenOf<'a> = &'a (dyn Fn(&[u8]) -> Result<String, StorageError> + Sync);

/// The name a bound index entry carries before its MAC, unchecked (an entry shorter than a MAC, as
/// stored before binding, is the name alone).
pub(crate) fn named_in(entry: &[u8]) -> &[u8] {
    let tag = crate::seal::binding::TAG;
    match entry.len() > tag {
        true => &entry[..entry.len() - tag],
        false => entry,
    }
}

/// What every engine does with operators.
pub(crate) trait Operators {
    /// Every operator's name and bound record, in name order (bytes).
    async fn operators(&self) -> Result<Vec<(String, Vec<u8>)>, StorageError>;

    /// The index entry of the token whose SHA-256 is `digest`, with the record of the operator it names.
    async fn operator_by_token(&self, digest: &str) -> Result<Option<TokenHolder>, StorageError>;

    /// Creates an operator and its token's index entry. Fails with [`StorageError::OperatorExists`] (the
    /// name as stored), writing nothing, when an operator has the name in any case: the audit log names
    /// operators by name, so `Alice` must not pass for `alice`.
    async fn create_operator(
        &self,
        operator: &OperatorEntry,
        events: &[NewEvent],
    ) -> Result<(), StorageError>;

    /// Deletes operator `name` and the index entry of the token `token_of` reads from its record;
    /// `false` (and nothing audited) when there was none. A record `token_of` refuses fails the whole
    /// delete.
    async fn delete_operator(
        &self,
        name: &str,
        token_of: TokenOf<'_>,
        events: &[NewEvent],
    ) -> Result<bool, StorageError>;

    /// Every index entry's digest and bound entry, in digest order (bytes): for the layout conversion.
    async fn operator_tokens(&self) -> Result<Vec<(String, Vec<u8>)>, StorageError>;

    /// Rewrites the record of operator `name`, unaudited: a layout conversion of `switchboard migrate`,
    /// which reports what it did.
    async fn rewrite_operator(&self, name: &str, record: Vec<u8>) -> Result<(), StorageError>;

    /// Rewrites an index entry, unaudited, as [`Operators::rewrite_operator`] does.
    async fn rewrite_operator_token(&self, token: &TokenEntry) -> Result<(), StorageError>;
}

impl Operators for Engine<'_> {
    async fn operators(&self) -> Result<Vec<(String, Vec<u8>)>, StorageError> {
        on_engine!(self, e => e.operators())
    }

    async fn operator_by_token(&self, digest: &str) -> Result<Option<TokenHolder>, StorageError> {
        on_engine!(self, e => e.operator_by_token(digest))
    }

    async fn create_operator(
        &self,
        operator: &OperatorEntry,
        events: &[NewEvent],
    ) -> Result<(), StorageError> {
        on_engine!(self, e => e.create_operator(operator, events))
    }

    async fn delete_operator(
        &self,
        name: &str,
        token_of: TokenOf<'_>,
        events: &[NewEvent],
    ) -> Result<bool, StorageError> {
        on_engine!(self, e => e.delete_operator(name, token_of, events))
    }

    async fn operator_tokens(&self) -> Result<Vec<(String, Vec<u8>)>, StorageError> {
        on_engine!(self, e => e.operator_tokens())
    }

    async fn rewrite_operator(&self, name: &str, record: Vec<u8>) -> Result<(), StorageError> {
        on_engine!(self, e => e.rewrite_operator(name, record))
    }

    async fn rewrite_operator_token(&self, token: &TokenEntry) -> Result<(), StorageError> {
        on_engine!(self, e => e.rewrite_operator_token(token))
    }
}
