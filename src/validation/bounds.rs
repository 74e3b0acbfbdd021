//! How much a request's `inputs` may hold. Every input is stored with the request, sealed, and echoed on
//! every read and list entry, so these bounds are also what bounds a list page (docs/api.md, Limits).
//! The value limit is the operator contract's (section 12); the others are ours, each far above what
//! a schema asks for (the demo schemas take at most 25 keys of a few dozen bytes).

use serde_json::{Map, Value};

/// The most bytes (UTF-8) an input value may have; a longer one is `INVALID_INPUTS` under its key.
pub const MAX_VALUE_BYTES: usize = 1024;
/// The most keys `inputs` may have.
pub const MAX_INPUTS: usize = 100;
/// The most bytes an input key may have.
pub const MAX_KEY_BYTES: usize = 128;
/// The most bytes of keys and string values together in one request's `inputs`.
pub const MAX_INPUTS_BYTES: usize = 16 * 1024;

/// Why `inputs` as a whole is refused (400 `INVALID_REQUEST`: no one key is at fault). The messages never
/// quote a key or a value.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum InputsTooLarge {
    /// More keys than [`MAX_INPUTS`].
    #[error("inputs has {0} keys; at most {MAX_INPUTS} are accepted")]
    TooManyKeys(usize),
    /// A key longer than [`MAX_KEY_BYTES`].
    #[error("an inputs key is longer than {MAX_KEY_BYTES} bytes ({0} bytes)")]
    KeyTooLong(usize),
    /// Keys and values over [`MAX_INPUTS_BYTES`] together.
    #[error("inputs hold {0} bytes of keys and values; at most {MAX_INPUTS_BYTES} are accepted")]
    TooManyBytes(usize),
}

/// Checks the bounds of `inputs` as a whole. A value over [`MAX_VALUE_BYTES`] is left to
/// [`super::validate_inputs`], which names its key; the total is then not reported.
pub fn check_input_bounds(inputs: &Map<String, Value>) -> Result<(), InputsTooLarge> {
    if inputs.len() > MAX_INPUTS {
        return Err(InputsTooLarge::TooManyKeys(inputs.len()));
    }
    let mut total = 0;
    for (key, value) in inputs {
        if key.len() > MAX_KEY_BYTES {
            return Err(InputsTooLarge::KeyTooLong(key.len()));
        }
        total += key.len() + value.as_str().map_or(0, str::len);
    }
    // A lone value over its own limit is reported under its key, which tells the client more.
    let over_value_limit = inputs
        .values()
        .filter_map(Value::as_str)
        .any(|value| value.len() > MAX_VALUE_BYTES);
    if total > MAX_INPUTS_BYTES && !over_value_limit {
        return Err(InputsTooLarge::TooManyBytes(total));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn the_key_count_is_bounded() {
        let at_limit: Map<String, Value> = (0..MAX_INPUTS)
            .map(|n| (format!("k{n}"), json!("v")))
            .collect();
        assert_eq!(check_input_bounds(&at_limit), Ok(()));
        let mut over = at_limit;
        over.insert("one-more".into(), json!("v"));
        assert_eq!(
            check_input_bounds(&over),
            Err(InputsTooLarge::TooManyKeys(MAX_INPUTS + 1))
        );
    }

    #[test]
    fn a_key_is_bounded() {
        let key = "k".repeat(MAX_KEY_BYTES);
        assert_eq!(
            check_input_bounds(&object(json!({ key.clone(): "v" }))),
            Ok(())
        );
        assert_eq!(
            check_input_bounds(&object(json!({ format!("{key}k"): "v" }))),
            Err(InputsTooLarge::KeyTooLong(MAX_KEY_BYTES + 1))
        );
    }

    #[test]
    fn keys_and_values_together_are_bounded_when_each_value_is_within_its_own_limit() {
        let value = "v".repeat(MAX_VALUE_BYTES);
        let full: Map<String, Value> = (0..16)
            .map(|n| (format!("k{n:02}"), json!(value)))
            .collect();
        // 16 values of 1024 bytes and 16 keys of 3 bytes: 48 bytes over.
        assert_eq!(
            check_input_bounds(&full),
            Err(InputsTooLarge::TooManyBytes(16 * (MAX_VALUE_BYTES + 3)))
        );
        let fitting: Map<String, Value> = (0..15)
            .map(|n| (format!("k{n:02}"), json!(value)))
            .collect();
        assert_eq!(check_input_bounds(&fitting), Ok(()));
        // One value over its own limit is reported under its key instead.
        let mut one_long = full;
        one_long.insert("long".into(), json!("v".repeat(MAX_VALUE_BYTES + 1)));
        assert_eq!(check_input_bounds(&one_long), Ok(()));
    }
}
