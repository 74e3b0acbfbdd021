//! The `resultSummary` of a request answered without a phone call: prose written from the values the
//! electronic answer mapped, in the schema's field order and with its labels, naming the transaction.

use std::collections::BTreeMap;

use switchboard_storage::{ElectronicRecord, FieldType, SchemaDefinition};

/// The summary of `results` obtained by `electronic` for `schema`.
pub fn result_summary(
    schema: &SchemaDefinition,
    results: &BTreeMap<String, String>,
    electronic: Option<&ElectronicRecord>,
) -> String {
    let kind = schema.request_type.to_ascii_lowercase();
    let response = match kind.contains("claim") && !kind.contains("appeal") {
        true => "claim-status response (X12 277)",
        false => "eligibility and benefits response (X12 271)",
    };
    let parts: Vec<String> = schema
        .fields
        .iter()
        .filter_map(|f| {
            let value = results.get(&f.name)?;
            Some(format!("{}: {}", f.label, spoken(f.field_type, value)))
        })
        .collect();
    let transaction = electronic
        .and_then(|e| e.transaction_id.as_deref())
        .map(|id| format!(" (transaction {id})"))
        .unwrap_or_default();
    format!(
        "Answered electronically from the payer's {response}{transaction}, without a phone call. {}.",
        parts.join("; ")
    )
}

fn spoken(field_type: FieldType, value: &str) -> String {
    match (field_type, value) {
        (FieldType::Boolean, "true") => "yes".to_owned(),
        (FieldType::Boolean, "false") => "no".to_owned(),
        (FieldType::Dollar, amount) => format!("${amount}"),
        (_, other) => other.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard_storage::FieldRecord;

    fn field(name: &str, label: &str, field_type: FieldType) -> FieldRecord {
        FieldRecord {
            name: name.into(),
            label: label.into(),
            description: String::new(),
            field_type,
            allowed_values: None,
            required: true,
            when: None,
        }
    }

    #[test]
    fn the_summary_is_written_from_the_mapped_values_in_field_order() {
        let schema = SchemaDefinition {
            name: None,
            request_type: "vob".into(),
            required_inputs: vec![],
            optional_inputs: vec![],
            follow_up: None,
            fields: vec![
                field("planActive", "Plan active", FieldType::Boolean),
                field("deductible", "Individual deductible", FieldType::Dollar),
                field("unanswered", "Never", FieldType::Alphanumeric),
            ],
            electronic: Default::default(),
        };
        let results = BTreeMap::from([
            ("deductible".to_string(), "1800.00".to_string()),
            ("planActive".to_string(), "true".to_string()),
        ]);
        let record = ElectronicRecord {
            transaction_id: Some("ec_1".into()),
            ..ElectronicRecord::default()
        };
        assert_eq!(
            result_summary(&schema, &results, Some(&record)),
            "Answered electronically from the payer's eligibility and benefits response (X12 271) \
             (transaction ec_1), without a phone call. Plan active: yes; Individual deductible: $1800.00."
        );
    }
}
