//! The product's words: `server.product_word` and the two names it lends by default, the auth header word
//! and the payer-lookup source word. Each becomes part of a header name or an enum value on the wire.

use super::raw::RawServer;
use super::specs::SpecError;

/// The three words of `[server]`, validated, defaults applied.
pub(crate) struct Words {
    pub product: String,
    pub auth_header: String,
    /// Lowercased.
    pub lookup_source: String,
}

/// Validates the words; the auth header and lookup source words default to the product word.
pub(crate) fn resolve(server: &RawServer) -> Result<Words, SpecError> {
    let product = validate_word("server.product_word", &server.product_word)?;
    let auth_header = match &server.auth_header_word {
        Some(word) => validate_word("server.auth_header_word", word)?,
        None => product.clone(),
    };
    let lookup_source = match &server.lookup_source_word {
        Some(word) => validate_word("server.lookup_source_word", word)?,
        None => product.clone(),
    };
    Ok(Words {
        product,
        auth_header,
        lookup_source: lookup_source.to_lowercase(),
    })
}

/// A word as configured: 1 to 40 ASCII letters or digits, since it becomes part of header names.
fn validate_word(key: &str, word: &str) -> Result<String, SpecError> {
    if word.is_empty() || word.len() > 40 || !word.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err(SpecError::new(
            key,
            "must be 1 to 40 ASCII letters or digits (it becomes part of header names)",
        ));
    }
    Ok(word.to_owned())
}
