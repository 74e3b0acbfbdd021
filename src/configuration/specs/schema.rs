//! [`SchemaSpec`]: a schema as an operator declares it, its fields and their conditions, and the checks it can
//! make on its own.

use std::collections::BTreeSet;

use serde::Deserialize;
use switchboard_storage::{ElectronicSource, FieldType};

use super::super::electronic_mapping::{
    validate_one_transaction, validate_service_types, ElectronicFieldSpec,
};
use super::SpecError;
use crate::domain::SchemaId;

/// `[[schemas]]` / `PUT /admin/v1/schemas/{id}`.
#[derive(Clone, Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SchemaSpec {
    /// Required in config; the admin path gives it otherwise.
    #[serde(default)]
    pub id: Option<String>,
    /// Human label.
    pub name: Option<String>,
    /// Kind of extraction.
    pub request_type: String,
    /// Version of a brand-new schema (later versions are numbered by the server).
    pub version: Option<u32>,
    /// Retired: gone for detail and creation.
    #[serde(default)]
    pub retired: bool,
    /// Hidden: gone from the list only.
    #[serde(default)]
    pub hidden: bool,
    /// Input keys that must be supplied.
    #[serde(default)]
    pub required_inputs: Vec<String>,
    /// Input keys that may be supplied.
    #[serde(default)]
    pub optional_inputs: Vec<String>,
    /// Chained follow-up leg.
    pub follow_up: Option<String>,
    /// Output fields.
    #[serde(default)]
    pub fields: Vec<FieldSpec>,
    /// X12 service type codes an eligibility inquiry asks about (`["30"]` when absent).
    #[serde(default)]
    pub electronic_service_types: Vec<String>,
}

/// One output field of a schema.
#[derive(Clone, Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FieldSpec {
    /// Key in `results`.
    pub name: String,
    /// Display label.
    pub label: String,
    /// The question the field answers.
    pub description: String,
    /// Value type.
    #[serde(rename = "type")]
    #[schema(value_type = String, examples("alphanumeric", "boolean", "multiple", "dollar", "date"))]
    pub field_type: FieldType,
    /// Suggested values of a `multiple` field.
    pub allowed_values: Option<Vec<String>>,
    /// `SUCCESS` needs every required field.
    #[serde(default)]
    pub required: bool,
    /// Asked only when another field has a given value.
    pub when: Option<WhenSpec>,
    /// Which part of a clearinghouse answer fills the field.
    #[schema(value_type = Option<Object>)]
    pub electronic: Option<ElectronicFieldSpec>,
}

/// Condition of a conditional field.
#[derive(Clone, Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WhenSpec {
    /// The deciding field.
    pub field: String,
    /// The answer that opens the conditional field.
    pub equals: String,
}

impl SchemaSpec {
    /// Checks the schema on its own (follow-up existence is the caller's).
    pub fn validate(&self) -> Result<(), SpecError> {
        if let Some(id) = &self.id {
            SchemaId::try_from(id.clone()).map_err(|e| SpecError::new("id", e.to_string()))?;
            if self.follow_up.as_deref() == Some(id.as_str()) {
                return Err(SpecError::new(
                    "follow_up",
                    "a schema cannot chain to itself",
                ));
            }
        }
        if self.request_type.trim().is_empty() {
            return Err(SpecError::new("request_type", "must not be blank"));
        }
        if self.name.as_deref().is_some_and(|n| n.trim().is_empty()) {
            return Err(SpecError::new("name", "must not be blank"));
        }
        if self.version == Some(0) {
            return Err(SpecError::new("version", "versions start at 1"));
        }
        let mut inputs = BTreeSet::new();
        for (list, keys) in [
            ("required_inputs", &self.required_inputs),
            ("optional_inputs", &self.optional_inputs),
        ] {
            for (i, key) in keys.iter().enumerate() {
                if key.trim().is_empty() {
                    return Err(SpecError::new(format!("{list}[{i}]"), "must not be blank"));
                }
                if !inputs.insert(key.as_str()) {
                    return Err(SpecError::new(
                        format!("{list}[{i}]"),
                        format!("{key:?} is listed twice"),
                    ));
                }
            }
        }
        if self.fields.is_empty() {
            return Err(SpecError::new(
                "fields",
                "a schema needs at least one field",
            ));
        }
        let names: BTreeSet<&str> = self.fields.iter().map(|f| f.name.as_str()).collect();
        if names.len() != self.fields.len() {
            let duplicate = self
                .fields
                .iter()
                .enumerate()
                .find(|(i, f)| self.fields[..*i].iter().any(|g| g.name == f.name))
                .map(|(i, _)| i)
                .unwrap_or_default();
            return Err(SpecError::new(
                format!("fields[{duplicate}].name"),
                "is used by another field",
            ));
        }
        for (i, field) in self.fields.iter().enumerate() {
            field
                .validate(&names)
                .map_err(|e| e.within(&format!("fields[{i}]")))?;
        }
        validate_service_types(&self.electronic_service_types)?;
        // Each field's own mapping was checked above.
        let sources: Vec<(usize, ElectronicSource)> = self
            .fields
            .iter()
            .enumerate()
            .filter_map(|(i, f)| Some((i, f.electronic_source()?.ok()?)))
            .collect();
        validate_one_transaction(sources.iter().map(|(i, s)| (*i, s)))?;
        Ok(())
    }
}

impl FieldSpec {
    /// The stored electronic source of the field, when it declares one.
    pub fn electronic_source(&self) -> Option<Result<ElectronicSource, SpecError>> {
        self.electronic
            .as_ref()
            .map(|spec| spec.source(self.field_type, self.allowed_values.as_deref()))
    }

    fn validate(&self, names: &BTreeSet<&str>) -> Result<(), SpecError> {
        if self.name.trim().is_empty() {
            return Err(SpecError::new("name", "must not be blank"));
        }
        if self.label.trim().is_empty() {
            return Err(SpecError::new("label", "must not be blank"));
        }
        match (self.field_type, &self.allowed_values) {
            (FieldType::Multiple, None) => {
                return Err(SpecError::new(
                    "allowed_values",
                    "a multiple field needs allowed_values",
                ))
            }
            (FieldType::Multiple, Some(values))
                if values.is_empty() || values.iter().any(|v| v.trim().is_empty()) =>
            {
                return Err(SpecError::new(
                    "allowed_values",
                    "must be non-blank values, at least one",
                ))
            }
            (FieldType::Multiple, Some(_)) => {}
            (other, Some(_)) => {
                return Err(SpecError::new(
                    "allowed_values",
                    format!(
                        "only multiple fields take allowed_values, not {}",
                        other.as_str()
                    ),
                ))
            }
            (_, None) => {}
        }
        if let Some(Err(e)) = self.electronic_source() {
            return Err(e);
        }
        if let Some(when) = &self.when {
            if when.field == self.name || !names.contains(when.field.as_str()) {
                return Err(SpecError::new(
                    "when.field",
                    format!("{:?} is not another field of this schema", when.field),
                ));
            }
            if self.required {
                return Err(SpecError::new(
                    "required",
                    "a conditional field cannot be required",
                ));
            }
        }
        Ok(())
    }
}
