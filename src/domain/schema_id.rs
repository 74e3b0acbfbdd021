//! The `schemaId` path parameter (service-interface section 8).

use std::fmt;

/// A schema id that satisfies the path-parameter rules: non-blank, at most 1500 characters, no `/`, not
/// starting with `_` or `.`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SchemaId(String);

/// Why a string is not a valid schema id; the message is the one clients see.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidSchemaId(&'static str);

const MAX_CHARS: usize = 1500;

impl TryFrom<String> for SchemaId {
    type Error = InvalidSchemaId;

    fn try_from(raw: String) -> Result<SchemaId, InvalidSchemaId> {
        if raw.trim().is_empty() {
            return Err(InvalidSchemaId("schemaId must not be blank"));
        }
        if raw.chars().count() > MAX_CHARS {
            return Err(InvalidSchemaId("schemaId must be at most 1500 characters"));
        }
        if raw.contains('/') {
            return Err(InvalidSchemaId("schemaId must not contain '/'"));
        }
        if raw.starts_with('_') || raw.starts_with('.') {
            return Err(InvalidSchemaId("schemaId must not start with '_' or '.'"));
        }
        Ok(SchemaId(raw))
    }
}

impl AsRef<str> for SchemaId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SchemaId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(raw: &str) -> Result<SchemaId, InvalidSchemaId> {
        SchemaId::try_from(raw.to_owned())
    }

    #[test]
    fn ordinary_ids_are_accepted() {
        for ok in [
            "claim-status-basic",
            "vob_v2",
            "a",
            "x.y",
            "schema with spaces",
            &"a".repeat(1500),
        ] {
            assert!(parse(ok).is_ok(), "{ok:?} should be valid");
        }
    }

    #[test]
    fn each_path_rule_rejects_its_case() {
        let cases = [
            ("", "blank"),
            ("   ", "blank"),
            ("\t", "blank"),
            ("a/b", "'/'"),
            ("_private", "'_' or '.'"),
            (".hidden", "'_' or '.'"),
        ];
        for (raw, expected) in cases {
            let err = parse(raw).unwrap_err();
            assert!(err.to_string().contains(expected), "{raw:?}: {err}");
        }
        assert!(parse(&"a".repeat(1501))
            .unwrap_err()
            .to_string()
            .contains("1500"));
    }

    #[test]
    fn length_counts_characters_not_bytes() {
        assert!(parse(&"é".repeat(1500)).is_ok());
    }
}
