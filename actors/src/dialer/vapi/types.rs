//! Vapi's wire shapes, named as Vapi's server SDK names them (`CreateCallDto`, `AssistantOverrides`,
//! `AnalysisPlan`, `StructuredDataPlan`, `JsonSchema`, `Server`, `Call`, `Analysis`, `Artifact`). Only the
//! members Switchboard sends or reads are modelled; responses ignore the rest, so a platform that adds
//! members never breaks a call.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Key of `assistantOverrides.metadata` carrying Switchboard's own call id. The SDK's `CreateCallDto` has
/// no top-level metadata; the overrides' metadata is stored on the call and comes back on every read and
/// in every server message.
pub const CALL_ID_KEY: &str = "switchboard_call_id";
/// Key of `assistantOverrides.metadata` carrying the request id.
pub const REQUEST_ID_KEY: &str = "switchboard_request_id";
/// Key of `assistantOverrides.metadata` carrying the attempt within its step.
pub const ATTEMPT_KEY: &str = "switchboard_attempt";

/// Header Vapi adds to every server message when `server.headers` asks for it.
pub const SECRET_HEADER: &str = "x-vapi-secret";

/// Body of `POST /call`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateCallDto {
    /// The operator's payer-calling assistant.
    pub assistant_id: String,
    /// Per-call overrides: variables, structured extraction, server URL, metadata.
    pub assistant_overrides: AssistantOverrides,
    /// The operator's Vapi number placing the call.
    pub phone_number_id: String,
    /// Who is called.
    pub customer: CreateCustomerDto,
    /// "Just for your own reference": Switchboard's call id again, visible in Vapi's dashboard.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// The callee of an outbound phone call.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateCustomerDto {
    /// E.164 number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<String>,
    /// Display name, for the operator's reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// The members of `AssistantOverrides` Switchboard sets per call.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistantOverrides {
    /// Template variables of the assistant's prompt (`{{memberId}}`, `{{questions}}`, ...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub variable_values: BTreeMap<String, Value>,
    /// The per-call structured extraction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub analysis_plan: Option<AnalysisPlan>,
    /// Where the call's server messages go.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<Server>,
    /// Which server messages are sent (Vapi's default list also has transcripts, speech and tool
    /// messages, which Switchboard does not use).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_messages: Vec<String>,
    /// Stored with the call; carries [`CALL_ID_KEY`] and [`REQUEST_ID_KEY`].
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, Value>,
}

/// `AnalysisPlan`: only the structured-data part is overridden (the assistant's summary plan stays).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AnalysisPlan {
    /// Output goes to `call.analysis.structuredData`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_data_plan: Option<StructuredDataPlan>,
}

/// `StructuredDataPlan`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StructuredDataPlan {
    /// Whether structured data is generated (Vapi's default is false).
    #[serde(default)]
    pub enabled: bool,
    /// What to extract.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<JsonSchema>,
    /// How long extraction may take before Vapi gives up (and leaves `structuredData` empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u32>,
}

/// Vapi's `JsonSchema` (a subset of JSON Schema: type, properties, items, enum, pattern, format,
/// description; no `anyOf`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JsonSchema {
    /// `string`, `number`, `integer`, `boolean`, `array` or `object`.
    #[serde(rename = "type")]
    pub kind: String,
    /// For `object`: the properties by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub properties: BTreeMap<String, JsonSchema>,
    /// What the model should output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Allowed values.
    #[serde(default, rename = "enum", skip_serializing_if = "Option::is_none")]
    pub allowed: Option<Vec<String>>,
    /// For `string`: a regex the value must match (Vapi hands it to the model's structured output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// A well-known string format (`date`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// For `object`: the properties that must be present.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required: Vec<String>,
}

/// `Server`: where Vapi posts the call's server messages, and the headers it adds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Server {
    /// `{server.public_url}/dialers/vapi/events`.
    pub url: String,
    /// `{"x-vapi-secret": server_secret}`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
}

/// `Call`, as `POST /call`, `GET /call/{id}` and `GET /call` return it and server messages embed it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Call {
    /// Vapi's call id.
    pub id: String,
    /// `scheduled`, `queued`, `ringing`, `in-progress`, `forwarding`, `ended`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Why it ended (a `CallEndedReason`), once ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_reason: Option<String>,
    /// ISO 8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// ISO 8601, once the call connected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// ISO 8601, once ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    /// Cost in USD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// The post-call analysis, once done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub analysis: Option<Analysis>,
    /// Transcript, recording, messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact: Option<Artifact>,
    /// The assistant the call ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assistant_id: Option<String>,
    /// The overrides it was created with (their metadata carries Switchboard's call id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assistant_overrides: Option<AssistantOverrides>,
    /// The number that placed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone_number_id: Option<String>,
    /// Who was called.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customer: Option<CreateCustomerDto>,
    /// The number that placed it, where Vapi includes it (server messages carry it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone_number: Option<PhoneNumber>,
}

/// The members of Vapi's phone-number objects Switchboard reads.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PhoneNumber {
    /// E.164 number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<String>,
}

impl Call {
    /// A text value of the overrides' metadata (Switchboard's ids).
    pub fn metadata_str(&self, key: &str) -> Option<&str> {
        self.assistant_overrides
            .as_ref()?
            .metadata
            .get(key)?
            .as_str()
    }

    /// Whether the call has ended (an ended reason alone also counts: Vapi sets both together).
    pub fn has_ended(&self) -> bool {
        self.status.as_deref() == Some("ended") || self.ended_reason.is_some()
    }
}

/// `Analysis`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Analysis {
    /// The call's summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// What the structured-data plan extracted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_data: Option<serde_json::Map<String, Value>>,
}

/// `Artifact`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    /// The conversation as text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<String>,
    /// Mono recording (the older member; `recording.mono.combinedUrl` is the newer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recording_url: Option<String>,
    /// `Recording`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recording: Option<Recording>,
    /// The spoken messages (kept as JSON: Switchboard reads only the transcript).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<Value>,
}

impl Artifact {
    /// The recording to keep: the combined mono recording, else the legacy `recordingUrl`.
    pub fn recording_location(&self) -> Option<&str> {
        self.recording
            .as_ref()
            .and_then(|r| r.mono.as_ref())
            .and_then(|m| m.combined_url.as_deref())
            .or(self.recording_url.as_deref())
    }
}

/// `Recording`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Recording {
    /// Stereo recording.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stereo_url: Option<String>,
    /// Mono recordings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mono: Option<Mono>,
}

/// `Mono`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Mono {
    /// Both parties mixed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub combined_url: Option<String>,
}
