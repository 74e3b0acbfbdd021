use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::codec::Record;

/// The moving part of a schema: which version is latest and whether it may be used.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SchemaHeadRecord {
    /// Schema id.
    pub id: String,
    /// Highest published version.
    pub latest_version: u32,
    /// Retired schemas are gone for detail and creation.
    pub retired: bool,
    /// Hidden schemas are gone from the list only.
    pub hidden: bool,
}

impl Record for SchemaHeadRecord {
    const KIND: &'static str = "schema head";
    const VERSION: u8 = 1;
}

/// One published, immutable version of a schema. Requests pin the version they ran on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SchemaVersionRecord {
    /// Schema id.
    pub id: String,
    /// Version number, from 1.
    pub version: u32,
    /// When this version was published.
    pub published_at: DateTime<Utc>,
    /// The content.
    pub definition: SchemaDefinition,
}

impl Record for SchemaVersionRecord {
    const KIND: &'static str = "schema version";
    const VERSION: u8 = 1;
}

/// What a schema asks for and returns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SchemaDefinition {
    /// Human label; the id stands in when absent.
    pub name: Option<String>,
    /// Kind of extraction, e.g. `claim-status`.
    pub request_type: String,
    /// Input keys that must be supplied.
    pub required_inputs: Vec<String>,
    /// Input keys that may be supplied.
    pub optional_inputs: Vec<String>,
    /// Schema of a chained follow-up leg.
    pub follow_up: Option<String>,
    /// Every field the schema can put in `results`.
    pub fields: Vec<FieldRecord>,
    /// Which fields a clearinghouse answer fills, and from what.
    #[serde(default, skip_serializing_if = "super::ElectronicMapping::is_empty")]
    pub electronic: super::ElectronicMapping,
}

/// One output field.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldRecord {
    /// Key in `results`.
    pub name: String,
    /// Display label.
    pub label: String,
    /// The question the field answers.
    pub description: String,
    /// Value type.
    pub field_type: FieldType,
    /// Suggested values of a `multiple` field.
    pub allowed_values: Option<Vec<String>>,
    /// `SUCCESS` needs every required field.
    pub required: bool,
    /// Asked only when another field has a given value.
    pub when: Option<FieldCondition>,
}

/// Value types of result fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldType {
    /// Free text.
    Alphanumeric,
    /// `true` / `false`.
    Boolean,
    /// One of a list of values.
    Multiple,
    /// An amount of money.
    Dollar,
    /// A calendar date.
    Date,
}

impl FieldType {
    /// The lowercase wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            FieldType::Alphanumeric => "alphanumeric",
            FieldType::Boolean => "boolean",
            FieldType::Multiple => "multiple",
            FieldType::Dollar => "dollar",
            FieldType::Date => "date",
        }
    }
}

/// Condition under which a field is asked.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldCondition {
    /// The field whose answer decides.
    pub field: String,
    /// The answer that opens this field.
    pub equals: String,
}
