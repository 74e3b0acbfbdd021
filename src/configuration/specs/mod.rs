//! Accounts, schemas and payers as an operator declares them: in `[[accounts]]`, `[[schemas]]` and
//! `[[payers]]` of the config file, and as the JSON bodies of the admin API, which take the same fields.
//! Each spec validates itself; cross-references (a schema an account names, a follow-up leg) are checked
//! by whoever knows the whole set.

mod account;
mod payer;
mod schema;

pub use account::{AccountSpec, CredentialSpec, PhoneBookSpec};
pub use payer::PayerSpec;
pub use schema::{FieldSpec, SchemaSpec, WhenSpec};

/// A validation failure: the key at fault, relative to the spec, and what is wrong with it.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {problem}")]
pub struct SpecError {
    /// Dotted path of the offending key, e.g. `fields[2].allowed_values`.
    pub key: String,
    /// Human-readable problem.
    pub problem: String,
}

impl SpecError {
    pub(crate) fn new(key: impl Into<String>, problem: impl Into<String>) -> SpecError {
        SpecError {
            key: key.into(),
            problem: problem.into(),
        }
    }

    /// The same error with its key placed under `prefix`.
    pub fn within(self, prefix: &str) -> SpecError {
        SpecError {
            key: format!("{prefix}.{}", self.key),
            problem: self.problem,
        }
    }
}

/// Ids chosen by operators: letters, digits, `-` and `_`, up to 128 characters.
pub(crate) fn validate_identifier(key: &str, id: &str) -> Result<(), SpecError> {
    let valid = !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if valid {
        Ok(())
    } else {
        Err(SpecError::new(
            key,
            format!("{id:?} must be 1 to 128 letters, digits, '-' or '_'"),
        ))
    }
}

pub(crate) fn validate_http_url(key: &str, raw: &str) -> Result<url::Url, SpecError> {
    let url = url::Url::parse(raw)
        .map_err(|e| SpecError::new(key, format!("{raw:?} is not a URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(SpecError::new(
            key,
            format!("{raw:?} must be an http(s) URL with a host"),
        ));
    }
    Ok(url)
}

fn is_header_token(value: &str) -> bool {
    !value.is_empty() && value.len() <= 200 && value.bytes().all(|b| b.is_ascii_graphic())
}

#[cfg(test)]
mod tests;
