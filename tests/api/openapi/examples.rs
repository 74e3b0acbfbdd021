//! Every example the served document shows is valid: each matches the schema beside it, and each
//! request-body example, posted as it stands to a server running the demo configuration, is accepted.

use serde_json::Value;

use super::{deref, fetch_document, operations, Schemas};
use crate::helpers::{spawn_app, status_and_json};

/// `(where, schema, example)` of every media type that carries examples, request bodies and answers.
fn examples(document: &Value, content: &Value, at: &str, out: &mut Vec<(String, Value, Value)>) {
    for (media, entry) in content.as_object().into_iter().flatten() {
        let schema = entry["schema"].clone();
        if let Some(example) = entry.get("example") {
            out.push((
                format!("{at} {media} example"),
                schema.clone(),
                example.clone(),
            ));
        }
        for (name, example) in entry["examples"].as_object().into_iter().flatten() {
            let value = deref(document, example)["value"].clone();
            out.push((
                format!("{at} {media} example {name:?}"),
                schema.clone(),
                value,
            ));
        }
    }
}

#[actix_web::test]
async fn every_documented_example_matches_its_schema_and_the_demo_server_accepts_each_request() {
    let app = spawn_app().await;
    let document = fetch_document(&app).await;
    let schemas = Schemas::of(&document);
    let token = app.live_token().await;

    let mut answers = Vec::new();
    for (_, response) in document["components"]["responses"].as_object().unwrap() {
        examples(
            &document,
            &response["content"],
            "shared response",
            &mut answers,
        );
    }
    let mut posted = 0;
    for (path, method, operation) in operations(&document) {
        for (status, response) in operation["responses"].as_object().unwrap() {
            let at = format!("{method} {path} {status}");
            examples(
                &document,
                &deref(&document, response)["content"],
                &at,
                &mut answers,
            );
        }
        let mut bodies = Vec::new();
        let at = format!("{method} {path} body");
        examples(
            &document,
            &operation["requestBody"]["content"],
            &at,
            &mut bodies,
        );
        for (what, schema, example) in bodies {
            schemas.assert_valid(&schema, &example, &what);
            let url = path.replace("{schemaId}", "claim-status-basic");
            let response = app
                .client
                .request(method.clone(), app.url(&url))
                .bearer_auth(&token)
                .json(&example)
                .send()
                .await
                .unwrap();
            let (status, body) = status_and_json(response).await;
            assert_eq!(status, 200, "{what}, posted to the demo server: {body}");
            if let Some(entries) = body["requests"].as_array() {
                for entry in entries {
                    assert!(
                        entry.get("error").is_none(),
                        "{what}: an entry failed: {body}"
                    );
                }
            }
            posted += 1;
        }
    }
    assert!(
        posted >= 3,
        "the document shows request examples ({posted} posted)"
    );
    for webhook in document["webhooks"].as_object().unwrap().values() {
        let at = "webhook body";
        examples(
            &document,
            &webhook["post"]["requestBody"]["content"],
            at,
            &mut answers,
        );
    }
    assert!(answers.len() >= 5, "{} answer examples", answers.len());
    for (what, schema, example) in answers {
        schemas.assert_valid(&schema, &example, &what);
    }
}
