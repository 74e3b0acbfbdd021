//! The admin API's answers (operator contract section 3), as `GET /admin/v1/openapi.json` shows them.
//! Keys are snake_case, as in the config file, except where an answer names a client-API id (`schemaId`,
//! `requestId`) or a time (`createdAt`), which keep the client API's spelling.
//!
//! Most handlers serialize these types, so the document cannot drift from them. The answers of the
//! operator, backup, audit and orchestration calls are built where their data lives; their types here only
//! describe them, and the tests check real answers of every call against the document.

use serde::{Deserialize, Serialize};
use switchboard_storage::{AccountRecord, PayerRecord, RequestId, SchemaHeadRecord};
use utoipa::ToSchema;

use super::{format_timestamp, WebhookAttemptOut};

/// An account as stored: everything but secrets.
#[derive(Debug, Serialize, ToSchema)]
pub struct AccountOut<'a> {
    /// The account's id.
    pub id: &'a str,
    /// Display name.
    pub name: &'a str,
    /// Requests scheduled per business day.
    pub daily_call_capacity: u32,
    /// IANA zone of the account's business days.
    pub timezone: &'a str,
    /// Account-level webhook URL.
    pub webhook_url: Option<&'a str>,
    /// Whether a webhook secret is set (the secret itself is never shown).
    pub webhook_secret_set: bool,
    /// Opt-in capabilities.
    pub features: Vec<&'static str>,
    /// Provisioned schema ids.
    #[schema(value_type = Vec<String>)]
    pub schemas: &'a [String],
    /// Per-account payer phone overrides.
    pub phone_book: Vec<PhoneBookEntryOut<'a>>,
    /// Issued key pairs, without their secrets.
    pub credentials: Vec<CredentialOut<'a>>,
    /// Days a request is kept once terminal; absent when requests are kept until purged.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub retention_days: Option<u32>,
    /// Hours a task for a person stays open; absent when the default of 72 applies.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub task_timeout_hours: Option<u32>,
    /// The account's own dialer kind; absent when it uses `[dialer] kind`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub dialer: Option<&'a str>,
    /// The webhook signing secret Switchboard generated: only in the answer that created the account.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub webhook_secret: Option<&'a str>,
}

impl<'a> From<&'a AccountRecord> for AccountOut<'a> {
    fn from(account: &'a AccountRecord) -> AccountOut<'a> {
        AccountOut {
            id: &account.id,
            name: &account.name,
            daily_call_capacity: account.daily_call_capacity,
            timezone: &account.timezone,
            webhook_url: account.webhook_url.as_deref(),
            webhook_secret_set: account.webhook_secret.is_some(),
            features: account.features.iter().map(|f| f.as_str()).collect(),
            schemas: &account.schemas,
            phone_book: account
                .phone_book
                .iter()
                .map(|e| PhoneBookEntryOut {
                    payer: &e.payer,
                    phone: &e.phone,
                })
                .collect(),
            credentials: account
                .credentials
                .iter()
                .map(|c| CredentialOut {
                    id: &c.id,
                    environment: c.environment.as_str(),
                    key: &c.key,
                    issued_at: format_timestamp(c.issued_at),
                })
                .collect(),
            retention_days: account.retention_days,
            task_timeout_hours: account.task_timeout_hours,
            dialer: account.dialer.as_deref(),
            webhook_secret: None,
        }
    }
}

/// One payer phone override.
#[derive(Debug, Serialize, ToSchema)]
pub struct PhoneBookEntryOut<'a> {
    /// Payer name as clients write it.
    pub payer: &'a str,
    /// The number dialed for it.
    pub phone: &'a str,
}

/// An issued key pair, without its secret.
#[derive(Debug, Serialize, ToSchema)]
pub struct CredentialOut<'a> {
    /// The pair's id.
    pub id: &'a str,
    /// `production` or `sandbox`.
    #[schema(examples("production", "sandbox"))]
    pub environment: &'static str,
    /// The API key.
    pub key: &'a str,
    /// When it was issued.
    pub issued_at: String,
}

/// `GET /admin/v1/accounts`.
#[derive(Debug, Serialize, ToSchema)]
pub struct AccountListOut<'a> {
    /// Every account.
    pub accounts: Vec<AccountOut<'a>>,
}

/// A key pair just issued: the only answer that shows its secret.
#[derive(Debug, Serialize, ToSchema)]
pub struct CredentialIssuedOut {
    /// The pair's id.
    pub id: String,
    /// `production` or `sandbox`.
    pub environment: &'static str,
    /// The API key.
    pub key: String,
    /// The API secret, shown only here.
    pub secret: String,
}

/// A schema's head, and what its latest version holds.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SchemaHeadOut {
    /// The schema's id.
    pub schema_id: String,
    /// Its latest version.
    pub version: u32,
    /// Retired: gone for detail and creation.
    pub retired: bool,
    /// Hidden: gone from the list only.
    pub hidden: bool,
    /// When the latest version was published (reads only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub published_at: Option<String>,
    /// The latest version's request type (reads only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub request_type: Option<String>,
    /// How many output fields the latest version has (reads only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub field_count: Option<usize>,
}

impl From<&SchemaHeadRecord> for SchemaHeadOut {
    fn from(head: &SchemaHeadRecord) -> SchemaHeadOut {
        SchemaHeadOut {
            schema_id: head.id.clone(),
            version: head.latest_version,
            retired: head.retired,
            hidden: head.hidden,
            published_at: None,
            request_type: None,
            field_count: None,
        }
    }
}

/// A payer of the directory.
#[derive(Debug, Serialize, ToSchema)]
pub struct PayerOut<'a> {
    /// The directory's name.
    pub name: &'a str,
    /// Other names and acronyms.
    #[schema(value_type = Vec<String>)]
    pub aliases: &'a [String],
    /// Number dialed; `null` when none is on file.
    pub phone: Option<&'a str>,
    /// Extra inputs the payer demands.
    #[schema(value_type = Vec<String>)]
    pub required_inputs: &'a [String],
    /// Reachable electronically.
    pub electronic: bool,
    /// The clearinghouse payer id.
    pub electronic_payer_id: Option<&'a str>,
    /// Member-ID prefixes that steer to this regional plan.
    #[schema(value_type = Vec<String>)]
    pub member_id_prefixes: &'a [String],
}

impl<'a> From<&'a PayerRecord> for PayerOut<'a> {
    fn from(payer: &'a PayerRecord) -> PayerOut<'a> {
        PayerOut {
            name: &payer.name,
            aliases: &payer.aliases,
            phone: payer.phone.as_deref(),
            required_inputs: &payer.required_inputs,
            electronic: payer.electronic,
            electronic_payer_id: payer.electronic_payer_id.as_deref(),
            member_id_prefixes: &payer.member_id_prefixes,
        }
    }
}

/// `GET /admin/v1/payers`.
#[derive(Debug, Serialize, ToSchema)]
pub struct PayerListOut<'a> {
    /// The whole directory.
    pub payers: Vec<PayerOut<'a>>,
}

/// The server's clock.
#[derive(Debug, Serialize, ToSchema)]
pub struct ClockOut {
    /// The clock's instant.
    pub now: String,
    /// `manual` (moved through this API) or `system`.
    #[schema(examples("manual", "system"))]
    pub mode: &'static str,
}

/// The clock once moved.
#[derive(Debug, Serialize, ToSchema)]
pub struct ClockMovedOut {
    /// The clock's new instant.
    pub now: String,
}

/// A request's webhook delivery and attempt log; every delivery field is `null` when none was enqueued.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeliveriesOut {
    /// The request asked about.
    #[schema(value_type = String)]
    pub request_id: RequestId,
    /// `pending`, `delivered` or `failed`.
    pub status: Option<&'static str>,
    /// Where the webhook goes.
    pub url: Option<String>,
    /// The next delayed round, while pending.
    pub next_round: Option<u32>,
    /// When the next round is due, while pending.
    pub next_attempt_at: Option<String>,
    /// Every attempt, oldest first.
    pub deliveries: Vec<WebhookAttemptOut>,
}

/// An accepted redelivery.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RedeliveryOut<'a> {
    /// The request whose webhook is sent again.
    #[schema(value_type = String)]
    pub request_id: &'a RequestId,
    /// `accepted`.
    pub status: &'static str,
}

/// The 401 and 403 of the admin API: no message, so a refusal says nothing about who exists.
#[derive(Debug, Serialize, ToSchema)]
pub struct AdminRefusalOut {
    /// `UNAUTHORIZED` or `FORBIDDEN`.
    #[schema(examples("UNAUTHORIZED", "FORBIDDEN"))]
    pub error: String,
}

/// Orchestration counters at one instant (described: the orchestrator's own snapshot is served).
#[derive(Debug, Serialize, ToSchema)]
pub struct OrchestrationStatsOut {
    /// Request actors alive now.
    pub running: u64,
    /// Request actors started since start-up.
    pub requests_started: u64,
    /// Requests that reached a terminal state since start-up.
    pub requests_finished: u64,
    /// Calls that ended since start-up.
    pub calls_ended: u64,
    /// Panics caught in step and call logic since start-up.
    pub panics: u64,
    /// Request-actor restarts after a fault since start-up.
    pub restarts: u64,
}

/// An operator just created: the only answer that shows its token (described).
#[derive(Debug, Serialize, ToSchema)]
pub struct OperatorCreatedOut {
    /// The operator's name.
    pub name: String,
    /// `admin`, `support` or `auditor`.
    pub role: String,
    /// Their token, shown only here.
    pub token: String,
}

/// An operator (described).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OperatorOut {
    /// The operator's name.
    pub name: String,
    /// `admin`, `support` or `auditor`.
    pub role: String,
    /// When it was created (the configured admin: when the server started).
    pub created_at: String,
    /// Present, `true`, on the operator `admin` of `server.admin_token`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub configured: Option<bool>,
}

/// `GET /admin/v1/operators` (described).
#[derive(Debug, Serialize, ToSchema)]
pub struct OperatorListOut {
    /// The configured admin first, then every other operator.
    pub operators: Vec<OperatorOut>,
}

/// A backup written (described).
#[derive(Debug, Serialize, ToSchema)]
pub struct BackupOut {
    /// The backup's directory.
    pub path: String,
    /// Bytes copied.
    pub bytes: u64,
}

/// Who or what an audit event names (described).
#[derive(Debug, Serialize, ToSchema)]
pub struct AuditPartyOut {
    /// Its id.
    pub id: String,
    /// Its kind (`operator`, `account`, `request`, ...).
    pub kind: String,
}

/// One event of the audit log (described). Keys are in the order its hash covers them.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditEventOut {
    /// What was done (`account.change`, `request.read`, ...).
    pub action: String,
    /// Who did it.
    pub actor: AuditPartyOut,
    /// When.
    pub at: String,
    /// SHA-256 of this event, chained to the previous one.
    pub hash: String,
    /// The caller's address, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub ip: Option<String>,
    /// `ok` or `denied`.
    pub outcome: String,
    /// The previous event's hash.
    pub prev_hash: String,
    /// Position in the log, from 1.
    pub seq: u64,
    /// What it was done to, when anything.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub target: Option<AuditPartyOut>,
}

/// A page of the audit log (described).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditPageOut {
    /// The events, oldest first.
    pub events: Vec<AuditEventOut>,
    /// The next page's `pageToken`; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub next_page_token: Option<String>,
}

/// The audit chain recomputed (described): `{"ok": true, "events"}` or `{"ok": false, "firstBadSeq"}`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditVerifyOut {
    /// Whether every event matches its hash.
    pub ok: bool,
    /// Events checked, when the chain holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub events: Option<u64>,
    /// The first event that no longer matches, when one does not.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub first_bad_seq: Option<u64>,
}

/// A checkpoint of the audit chain (described; `GET /admin/v1/audit/checkpoint`).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AuditCheckpointOut {
    /// The event's number.
    pub seq: u64,
    /// Its published SHA-256 hash, hex.
    pub hash: String,
    /// When it happened, as the event says.
    #[schema(format = DateTime)]
    pub at: String,
    /// HMAC-SHA256 of the three under a key derived from the master key, hex.
    pub mac: String,
}

/// The body of `POST /admin/v1/audit/verify` (described).
#[derive(Debug, Deserialize, ToSchema)]
pub struct AuditVerifyIn {
    /// Checkpoints kept from earlier `GET /admin/v1/audit/checkpoint` answers; at most 1,000.
    #[schema(max_items = 1000)]
    pub checkpoints: Vec<AuditCheckpointOut>,
}
