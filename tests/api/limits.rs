//! The size limits of `POST /v1/requests` (operator contract section 12, docs/api.md "Limits"): each
//! input value, the `internalId`/`internalTag`, the number and weight of inputs, the per-request
//! `webhookUrl` and the entries of a batch. Each row checks the last size accepted and the first refused,
//! the whole envelope, and that a refused create left nothing behind.

use serde_json::{json, Map, Value};

use crate::helpers::{spawn_app, TestApp};

const SCHEMA: &str = "claim-status-basic";

fn valid_inputs() -> Map<String, Value> {
    json!({
        "payerName": "Aetna",
        "phoneNumber": "(888) 555-0100",
        "memberId": "W12345678",
        "patientFirstName": "Jane",
        "patientLastName": "Doe",
        "patientDateOfBirth": "1980-04-02",
        "dateOfService": "2026-10-15",
        "billingProviderNpi": "1234567890",
        "billingProviderTaxId": "12-3456789",
    })
    .as_object()
    .unwrap()
    .clone()
}

fn item(inputs: Map<String, Value>) -> Value {
    json!({ "schemaId": SCHEMA, "inputs": inputs })
}

/// How many requests today's listing holds.
async fn stored(app: &TestApp, token: &str) -> usize {
    let (status, body) = app.get_json("/v1/requests?pageSize=500", token).await;
    assert_eq!(status, 200, "{body}");
    body["requests"].as_array().unwrap().len()
}

/// Posts `body`, expecting a refusal with exactly `expected`, and checks nothing was stored.
async fn assert_refused(app: &TestApp, token: &str, body: &Value, expected: Value, what: &str) {
    let before = stored(app, token).await;
    let (status, answer) = app.post_requests(token, body).await;
    assert_eq!((status, &answer), (400, &expected), "{what}");
    assert_eq!(stored(app, token).await, before, "{what}: nothing stored");
}

fn invalid_request(message: &str) -> Value {
    json!({ "error": "INVALID_REQUEST", "message": message })
}

#[actix_web::test]
async fn an_input_value_of_1024_bytes_is_accepted_and_one_of_1025_is_refused_naming_the_field() {
    let app = spawn_app().await;
    let token = app.live_token().await;
    // A free-text extra key: no pattern but the universal rules, so only the length can refuse it.
    let mut inputs = valid_inputs();
    inputs.insert("note".into(), json!("n".repeat(1024)));
    let (status, created) = app.post_requests(&token, &item(inputs.clone())).await;
    assert_eq!(status, 200, "{created}");
    let read = app
        .read_request(&token, created["requestId"].as_str().unwrap())
        .await;
    assert_eq!(read["inputs"]["note"].as_str().unwrap().len(), 1024);

    inputs.insert("note".into(), json!("n".repeat(1025)));
    // The review's 7 MiB memberId: refused under its key like any value over the limit.
    let mut huge = valid_inputs();
    huge.insert("memberId".into(), json!("W".repeat(7 << 20)));
    for (inputs, field) in [(inputs, "note"), (huge, "memberId")] {
        let expected = json!({
            "error": "INVALID_INPUTS",
            "message": format!("Input validation failed: invalid inputs: {field}"),
            "details": {
                "missingInputs": [],
                "invalidInputs": { field: format!("{field} is longer than 1024 bytes") },
            },
        });
        assert_refused(&app, &token, &item(inputs), expected, field).await;
    }
}

#[actix_web::test]
async fn internal_id_and_internal_tag_of_256_bytes_are_accepted_and_of_257_refused_in_the_message()
{
    let app = spawn_app().await;
    let token = app.live_token().await;
    for field in ["internalId", "internalTag"] {
        let mut body = item(valid_inputs());
        body[field] = json!("i".repeat(256));
        let (status, created) = app.post_requests(&token, &body).await;
        assert_eq!(status, 200, "{field} of 256 bytes: {created}");
        let read = app
            .read_request(&token, created["requestId"].as_str().unwrap())
            .await;
        assert_eq!(read[field].as_str().unwrap().len(), 256, "{field}");

        // Multi-byte characters count in bytes: 129 two-byte characters are 258 bytes.
        for (over, bytes) in [("i".repeat(257), 257), ("é".repeat(129), 258)] {
            let mut body = item(valid_inputs());
            body[field] = json!(over);
            let expected = json!({
                "error": "INVALID_INPUTS",
                "message": format!(
                    "Input validation failed: {field} is longer than 256 bytes ({bytes} bytes)"
                ),
                "details": { "missingInputs": [], "invalidInputs": {} },
            });
            assert_refused(&app, &token, &body, expected, field).await;
        }
    }
}

#[actix_web::test]
async fn an_internal_id_over_the_limit_is_refused_in_a_batch_entry_while_the_others_are_created() {
    let app = spawn_app().await;
    let token = app.live_token().await;
    let mut long = item(valid_inputs());
    long["internalId"] = json!("i".repeat(257));
    let body = json!({ "requests": [item(valid_inputs()), long] });
    let (status, answer) = app.post_requests(&token, &body).await;
    assert_eq!(status, 207, "{answer}");
    assert_eq!(
        answer["requests"][1],
        json!({
            "error": "INVALID_INPUTS",
            "message": "Input validation failed: internalId is longer than 256 bytes (257 bytes)",
            "details": { "missingInputs": [], "invalidInputs": {} },
        })
    );
}

#[actix_web::test]
async fn the_number_of_inputs_their_keys_and_their_total_weight_are_bounded() {
    let app = spawn_app().await;
    let token = app.live_token().await;
    // 9 schema inputs and 91 extra keys: 100 keys.
    let mut hundred = valid_inputs();
    for n in 0..91 {
        hundred.insert(format!("extra{n:02}"), json!("x"));
    }
    let (status, body) = app.post_requests(&token, &item(hundred.clone())).await;
    assert_eq!(status, 200, "100 inputs: {body}");
    let mut too_many = hundred;
    too_many.insert("extra91".into(), json!("x"));
    assert_refused(
        &app,
        &token,
        &item(too_many),
        invalid_request("inputs has 101 keys; at most 100 are accepted"),
        "101 inputs",
    )
    .await;

    let mut long_key = valid_inputs();
    long_key.insert("k".repeat(128), json!("x"));
    let (status, body) = app.post_requests(&token, &item(long_key)).await;
    assert_eq!(status, 200, "a key of 128 bytes: {body}");
    let mut longer_key = valid_inputs();
    longer_key.insert("k".repeat(129), json!("x"));
    assert_refused(
        &app,
        &token,
        &item(longer_key),
        invalid_request("an inputs key is longer than 128 bytes (129 bytes)"),
        "a key of 129 bytes",
    )
    .await;

    // Fifteen values of 1 KiB fit beside the schema's inputs; sixteen are over 16 KiB together.
    let mut heavy = valid_inputs();
    for n in 0..15 {
        heavy.insert(format!("note{n:02}"), json!("n".repeat(1024)));
    }
    let (status, body) = app.post_requests(&token, &item(heavy.clone())).await;
    assert_eq!(status, 200, "15 KiB of inputs: {body}");
    heavy.insert("note15".into(), json!("n".repeat(1024)));
    let total: usize = heavy
        .iter()
        .map(|(k, v)| k.len() + v.as_str().unwrap().len())
        .sum();
    assert_refused(
        &app,
        &token,
        &item(heavy),
        invalid_request(&format!(
            "inputs hold {total} bytes of keys and values; at most 16384 are accepted"
        )),
        "16 KiB of inputs and more",
    )
    .await;
}

#[actix_web::test]
async fn a_webhook_url_is_bounded() {
    let app = spawn_app().await;
    let token = app.live_token().await;
    let url = |len: usize| {
        let base = "https://hooks.example.com/";
        format!("{base}{}", "p".repeat(len - base.len()))
    };
    let mut body = item(valid_inputs());
    body["webhookUrl"] = json!(url(2048));
    let (status, answer) = app.post_requests(&token, &body).await;
    // The name need not resolve at creation: only a definite refusal fails the create.
    assert_eq!(status, 200, "a URL of 2048 bytes: {answer}");
    body["webhookUrl"] = json!(url(2049));
    assert_refused(
        &app,
        &token,
        &body,
        invalid_request("webhookUrl is longer than 2048 bytes (2049 bytes)"),
        "a URL of 2049 bytes",
    )
    .await;
}

#[actix_web::test]
async fn a_batch_of_1000_entries_is_accepted_and_one_of_1001_is_refused_whole() {
    let app = spawn_app().await;
    let token = app.live_token().await;
    // Over the demo account's daily capacity: the entries book onto later days, as a batch may.
    let entries = |n: usize| json!({ "requests": vec![item(valid_inputs()); n] });
    let (status, answer) = app.post_requests(&token, &entries(1000)).await;
    assert_eq!(status, 200, "1000 entries");
    assert_eq!(answer["requests"].as_array().unwrap().len(), 1000);
    assert_refused(
        &app,
        &token,
        &entries(1001),
        invalid_request("requests has 1001 entries; at most 1000 are accepted in one POST"),
        "1001 entries",
    )
    .await;
}
