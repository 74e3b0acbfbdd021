//! The request-body examples of the document. Each is valid against the demo configuration
//! (`config/default.toml`): posted to a demo server it is accepted, which the API tests check.

use serde_json::{json, Value};
use utoipa::openapi::example::ExampleBuilder;
use utoipa::openapi::path::Operation;
use utoipa::openapi::{OpenApi as Document, RefOr};

/// Adds the examples to the operations they belong to.
pub(super) fn add(document: &mut Document) {
    let single = claim_status("claim-1001", "Aetna", "W123456789");
    let vob = json!({
        "schemaId": "vob-basic",
        "internalId": "vob-2002",
        "inputs": {
            "payerName": "Cigna",
            "memberId": "U12345678",
            "groupNumber": "GRP30211",
            "patientFirstName": "John",
            "patientLastName": "Smith",
            "patientDateOfBirth": "1975-09-30",
            "billingProviderNpi": "1234567893",
        },
    });
    let batch = json!({ "requests": [claim_status("claim-1002", "Aetna", "W987654321"), vob] });
    set(
        document,
        "/v1/requests",
        "post",
        &[("single", single), ("batch", batch)],
    );
    set(
        document,
        "/v1/schemas/{schemaId}/required-payer-inputs",
        "post",
        &[(
            "two payers",
            json!({ "payerNames": ["Aetna", "UnitedHealthcare"] }),
        )],
    );
}

/// A `claim-status-basic` request to a payer of the demo directory (its number comes from the lookup).
fn claim_status(internal_id: &str, payer: &str, member_id: &str) -> Value {
    json!({
        "schemaId": "claim-status-basic",
        "internalId": internal_id,
        "inputs": {
            "payerName": payer,
            "memberId": member_id,
            "patientFirstName": "Jane",
            "patientLastName": "Doe",
            "patientDateOfBirth": "1980-04-12",
            "dateOfService": "2026-10-01",
            "billingProviderNpi": "1234567893",
            "billingProviderTaxId": "12-3456789",
        },
    })
}

fn set(document: &mut Document, path: &str, method: &str, examples: &[(&str, Value)]) {
    let item = document
        .paths
        .paths
        .get_mut(path)
        .unwrap_or_else(|| panic!("{path} is documented"));
    let operation: &mut Operation = match method {
        "post" => item.post.as_mut(),
        _ => item.get.as_mut(),
    }
    .unwrap_or_else(|| panic!("{method} {path} is documented"));
    let Some(RefOr::T(body)) = operation.request_body.as_mut() else {
        panic!("{method} {path} takes a body");
    };
    let content = body
        .content
        .get_mut("application/json")
        .unwrap_or_else(|| panic!("{method} {path} takes JSON"));
    let RefOr::T(content) = content else {
        panic!("{method} {path} has inline content");
    };
    for (name, value) in examples {
        let example = ExampleBuilder::new().value(Some(value.clone())).build();
        content
            .examples
            .insert((*name).to_owned(), RefOr::T(example));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use crate::wire::{CreateIn, RequiredPayerInputsIn};

    fn body_examples(document: &Value, path: &str) -> Vec<(String, Value)> {
        let content =
            &document["paths"][path]["post"]["requestBody"]["content"]["application/json"];
        content["examples"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(name, example)| (name.clone(), example["value"].clone()))
            .collect()
    }

    #[test]
    fn the_examples_are_the_shapes_the_endpoints_read() {
        let words = super::super::Words {
            product: "Switchboard".into(),
            auth_header: "Switchboard".into(),
            lookup_source: "switchboard".into(),
        };
        let document: Value = serde_json::from_str(&super::super::render(&words)).unwrap();
        let creates = body_examples(&document, "/v1/requests");
        assert_eq!(creates.len(), 2);
        for (name, example) in creates {
            let body: CreateIn = serde_json::from_value(example).unwrap();
            match (name.as_str(), body) {
                ("single", CreateIn::Single(item)) => assert!(item.internal_id.is_some()),
                ("batch", CreateIn::Batch(batch)) => assert_eq!(batch.requests.len(), 2),
                (name, body) => panic!("example {name} reads as {body:?}"),
            }
        }
        let path = "/v1/schemas/{schemaId}/required-payer-inputs";
        for (_, example) in body_examples(&document, path) {
            let body: RequiredPayerInputsIn = serde_json::from_value(example).unwrap();
            assert!(!body.payer_names.is_empty());
        }
    }
}
