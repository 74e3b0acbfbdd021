use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::codec::Record;

/// What an operator may do (operator contract section 7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Every admin call.
    Admin,
    /// Reads requests, deliveries and the console across accounts; changes nothing.
    Support,
    /// Reads and exports the audit log only; sees no PHI.
    Auditor,
    /// Works the queue of tasks for people (list, read, claim, release, complete, give up) and nothing
    /// else.
    Caller,
}

impl Role {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::Support => "support",
            Role::Auditor => "auditor",
            Role::Caller => "caller",
        }
    }

    /// The role named `text`, if any.
    pub fn parse(text: &str) -> Option<Role> {
        match text {
            "admin" => Some(Role::Admin),
            "support" => Some(Role::Support),
            "auditor" => Some(Role::Auditor),
            "caller" => Some(Role::Caller),
            _ => None,
        }
    }
}

/// A person with a token of their own for the admin API and the console.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OperatorRecord {
    /// Unique name.
    pub name: String,
    /// What they may do.
    pub role: Role,
    /// SHA-256 of their token, hex; the token itself is never stored.
    pub token_digest: String,
    /// When they were created.
    pub created_at: DateTime<Utc>,
}

impl Record for OperatorRecord {
    const KIND: &'static str = "operator";
    const VERSION: u8 = 1;
}
