use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::codec::Record;

/// An account: who may call the API, what it is provisioned with and how its work is scheduled.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AccountRecord {
    /// Stable account id, chosen by the operator.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Requests that may be scheduled per business day.
    pub daily_call_capacity: u32,
    /// IANA zone in which business days are counted.
    pub timezone: String,
    /// Account-level webhook URL.
    pub webhook_url: Option<String>,
    /// Account-level webhook signing secret.
    pub webhook_secret: Option<String>,
    /// Opt-in capabilities enabled by the account team.
    pub features: Vec<Feature>,
    /// Schemas provisioned to the account.
    pub schemas: Vec<String>,
    /// Per-account payer phone overrides.
    pub phone_book: Vec<PhoneBookEntry>,
    /// Issued key/secret pairs.
    pub credentials: Vec<CredentialRecord>,
    /// Organization name of the provider in clearinghouse inquiries, when the inputs name none.
    #[serde(default)]
    pub provider_name: Option<String>,
    /// Days a request is kept once terminal; then the server purges it. `None`: kept until purged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retention_days: Option<u32>,
    /// The dialer kind of the account's production requests (`simulated`, `http`, `retell`, `vapi`);
    /// `None`: the server's default dialer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialer: Option<String>,
    /// Hours a task may stay open before the request ends as it would have without a person; `None`:
    /// the default of 72.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_timeout_hours: Option<u32>,
}

impl AccountRecord {
    /// Whether the account team enabled `feature`.
    pub fn has(&self, feature: Feature) -> bool {
        self.features.contains(&feature)
    }

    /// The credential with this id, if it is still issued.
    pub fn credential(&self, credential_id: &str) -> Option<&CredentialRecord> {
        self.credentials.iter().find(|c| c.id == credential_id)
    }
}

impl Record for AccountRecord {
    const KIND: &'static str = "account";
    const VERSION: u8 = 1;
}

/// One issued API key/secret pair. Only a salted, slow hash of the secret is kept.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CredentialRecord {
    /// Opaque id carried in bearer tokens, so removing the pair revokes its tokens.
    pub id: String,
    /// Production or sandbox.
    pub environment: Environment,
    /// The public API key.
    pub key: String,
    /// Lowercase hex SHA-256 of the secret, as releases before argon2 kept it; empty once the opening
    /// has rehashed it into `secret_argon2` ([`crate::hash_api_secret`]).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub secret_sha256: String,
    /// The secret's salted, slow hash: a PHC string of argon2id over its SHA-256 (hex).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub secret_argon2: String,
    /// When the pair was issued.
    pub issued_at: DateTime<Utc>,
}

/// Which path a credential routes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Environment {
    /// Real calls, real capacity.
    Production,
    /// Generated results, no dialing, its own capacity ledger.
    Sandbox,
}

impl Environment {
    /// The lowercase name used in config, tokens and keys.
    pub fn as_str(self) -> &'static str {
        match self {
            Environment::Production => "production",
            Environment::Sandbox => "sandbox",
        }
    }
}

/// Account opt-in capabilities (service-interface section 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Feature {
    /// `phoneNumber` becomes optional and is looked up from `payerName`.
    PayerPhoneLookup,
    /// Some payers require more inputs than the schema lists.
    EnforcePayerRequiredInputs,
    /// Member IDs are checked against payer-family rules.
    EnforceMemberIdValidation,
    /// Electronic eligibility lookups are tried before a call.
    ElectronicChannels,
    /// Schemas with a follow-up leg run it.
    FollowUpCalls,
    /// `transcriptPostCall` is returned.
    TranscriptPostCall,
    /// `callFromNumber` is returned.
    CallFromNumber,
    /// `attemptDetails` is returned.
    AttemptDetails,
    /// `scriptVersion` is returned.
    ScriptVersion,
    /// Regional-plan member IDs must carry their plan's three-character prefix (gated per account).
    EnforceMemberIdPrefix,
    /// A request the calls could not finish waits for a person (a task) instead of failing.
    HumanFallback,
    /// Each call is placed in the hour its payer was learned to answer fastest (operator contract §11).
    LearnedCallWindows,
}

impl Feature {
    /// Every feature, in documentation order.
    pub const ALL: [Feature; 12] = [
        Feature::PayerPhoneLookup,
        Feature::EnforcePayerRequiredInputs,
        Feature::EnforceMemberIdValidation,
        Feature::ElectronicChannels,
        Feature::FollowUpCalls,
        Feature::TranscriptPostCall,
        Feature::CallFromNumber,
        Feature::AttemptDetails,
        Feature::ScriptVersion,
        Feature::EnforceMemberIdPrefix,
        Feature::HumanFallback,
        Feature::LearnedCallWindows,
    ];

    /// The snake_case name used in config and the admin API.
    pub fn as_str(self) -> &'static str {
        match self {
            Feature::PayerPhoneLookup => "payer_phone_lookup",
            Feature::EnforcePayerRequiredInputs => "enforce_payer_required_inputs",
            Feature::EnforceMemberIdValidation => "enforce_member_id_validation",
            Feature::ElectronicChannels => "electronic_channels",
            Feature::FollowUpCalls => "follow_up_calls",
            Feature::TranscriptPostCall => "transcript_post_call",
            Feature::CallFromNumber => "call_from_number",
            Feature::AttemptDetails => "attempt_details",
            Feature::ScriptVersion => "script_version",
            Feature::EnforceMemberIdPrefix => "enforce_member_id_prefix",
            Feature::HumanFallback => "human_fallback",
            Feature::LearnedCallWindows => "learned_call_windows",
        }
    }
}

/// A per-account override of a payer's phone number.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhoneBookEntry {
    /// Payer name as the client writes it.
    pub payer: String,
    /// Ten-digit US number to dial instead of the directory's.
    pub phone: String,
}
