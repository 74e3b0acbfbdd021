//! What of a panic's message may be logged: one rule for the process's panic hook, a handler's caught
//! panic and a call's.

use std::any::Any;
use std::borrow::Cow;

/// The panic's message if the code wrote it as it stands (`panic!("...")`), which holds no request data.
/// A message formatted at run time may quote a value from a request: slicing a string off a character
/// boundary quotes the string, `unwrap` on an error prints the error, `expect` on a `Result` too. Such a
/// message is withheld and only its length told; the location and the backtrace still point at the line.
pub fn loggable_message(payload: &(dyn Any + Send)) -> Cow<'static, str> {
    if let Some(literal) = payload.downcast_ref::<&'static str>() {
        return Cow::Borrowed(literal);
    }
    match payload.downcast_ref::<String>() {
        Some(formatted) => Cow::Owned(format!(
            "(a message formatted at run time, {} bytes, withheld: it may quote request data)",
            formatted.len()
        )),
        None => Cow::Borrowed("(a panic without a message)"),
    }
}
