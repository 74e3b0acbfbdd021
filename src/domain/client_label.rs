//! `internalId` and `internalTag`: the client's own text, stored with the request and echoed on every read
//! and webhook, so their size is bounded where they enter (operator contract section 12).

use std::fmt;

/// The most bytes (UTF-8) an `internalId` or `internalTag` may have.
pub const MAX_LABEL_BYTES: usize = 256;

/// An `internalId` or `internalTag` of at most [`MAX_LABEL_BYTES`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientLabel(String);

/// A label over the limit; the message names the field and the limit, never the value.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field} is longer than {MAX_LABEL_BYTES} bytes ({bytes} bytes)")]
pub struct LabelTooLong {
    /// `internalId` or `internalTag`.
    pub field: &'static str,
    /// The size sent.
    pub bytes: usize,
}

impl ClientLabel {
    /// `raw` as the `field` of a request, or why it is refused.
    pub fn parse(field: &'static str, raw: String) -> Result<ClientLabel, LabelTooLong> {
        if raw.len() > MAX_LABEL_BYTES {
            return Err(LabelTooLong {
                field,
                bytes: raw.len(),
            });
        }
        Ok(ClientLabel(raw))
    }

    /// The text, for the layers below the HTTP edge.
    pub fn into_inner(self) -> String {
        self.0
    }
}

impl AsRef<str> for ClientLabel {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ClientLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_of_the_limit_is_accepted_and_one_byte_more_is_refused() {
        let at_limit = "a".repeat(MAX_LABEL_BYTES);
        assert_eq!(
            ClientLabel::parse("internalId", at_limit.clone())
                .unwrap()
                .as_ref(),
            at_limit
        );
        let error = ClientLabel::parse("internalTag", format!("{at_limit}b")).unwrap_err();
        assert_eq!(
            error.to_string(),
            "internalTag is longer than 256 bytes (257 bytes)"
        );
    }

    #[test]
    fn the_limit_counts_bytes_not_characters() {
        // 128 two-byte characters are 256 bytes; one more is over.
        assert!(ClientLabel::parse("internalId", "é".repeat(128)).is_ok());
        assert!(ClientLabel::parse("internalId", "é".repeat(129)).is_err());
    }
}
