//! Authentication: API key/secret exchange, bearer tokens, and the extractors handlers use to learn who
//! is calling. A handler that takes a [`Caller`] only runs for a valid, unexpired, unrevoked token of an
//! existing account; one that takes [`Admin`] only for the operator's admin token.

mod admin;
mod caller;
mod digest;
mod identity_first;
mod secrets;
mod token;

pub use admin::{
    count_unknown_token, denied, operator_of, throttled, token_digest, Admin, AnyOperator, Auditor,
    Operator, Reader, TaskReader, TaskWorker, CONFIGURED_ADMIN,
};
pub use caller::Caller;
pub use digest::{constant_time_eq, secret_digest};
pub use identity_first::{identity_first, identity_first_on_reads};
pub use secrets::SecretChecks;
pub use token::{Claims, TokenIssuer, TokenProblem, TOKEN_LIFETIME};
