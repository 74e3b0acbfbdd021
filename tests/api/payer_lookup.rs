//! Payer phone number lookup (service-interface 2.5, 4.6, 7.2), required-payer-inputs (4.5) and the
//! retired legacy endpoints (9.4).

use reqwest::Method;
use serde_json::{json, Map, Value};

use crate::helpers::{
    spawn_app, spawn_app_with, status_and_json, TestApp, TestConfig, LIVE_KEY, LIVE_SECRET,
};

/// Directory numbers (config/default.toml, `[[payers]]`).
const UHC_DIRECTORY: &str = "8775550100";
const AETNA_DIRECTORY: &str = "8005550101";
const BCBS_TX_DIRECTORY: &str = "8005550130";
const BCBS_IL_DIRECTORY: &str = "8005550131";
/// The demo account's phone book (config/default.toml, `[[accounts.phone_book]]`).
const AETNA_PHONE_BOOK: &str = "8885550192";
const BCBS_TX_PHONE_BOOK: &str = "8775550197";
/// A number the client supplies, written the way a client might write it.
const SUPPLIED: &str = "(888) 555-0100";

/// Valid `vob-basic` inputs except the three every test chooses itself: `payerName`, `phoneNumber` and
/// `memberId`.
fn base_inputs() -> Map<String, Value> {
    let inputs = json!({
        "patientFirstName": "Ada",
        "patientLastName": "Lovelace",
        "patientDateOfBirth": "1980-02-14",
        "billingProviderNpi": "1234567893",
        "groupNumber": "GRP-100",
    });
    inputs.as_object().unwrap().clone()
}

/// A `vob-basic` create body: the base inputs plus `payerName`, an optional `phoneNumber` and `memberId`.
fn vob_request(payer_name: &str, phone_number: Option<&str>, member_id: &str) -> Value {
    let mut inputs = base_inputs();
    inputs.insert("payerName".into(), json!(payer_name));
    if let Some(phone) = phone_number {
        inputs.insert("phoneNumber".into(), json!(phone));
    }
    inputs.insert("memberId".into(), json!(member_id));
    json!({ "schemaId": "vob-basic", "inputs": inputs })
}

/// The same body with `useMatchedPayerPhone` set at the top level.
fn with_flag(mut body: Value, flag: bool) -> Value {
    body["useMatchedPayerPhone"] = json!(flag);
    body
}

/// The expected `payerLookup` when the supplied number is dialed.
fn input_lookup(payer_name: &str, phone: &str) -> Value {
    json!({
        "inputPayerName": payer_name,
        "inputPhoneNumber": phone,
        "matchedPayerName": null,
        "matchedPayerPhone": null,
        "phoneNumberToUse": phone,
        "phoneNumberSource": "input",
    })
}

/// The expected `payerLookup` when a matched number is dialed.
fn matched_lookup(
    payer_name: &str,
    input_phone: Option<&str>,
    matched_name: &str,
    matched_phone: &str,
    source: &str,
) -> Value {
    json!({
        "inputPayerName": payer_name,
        "inputPhoneNumber": input_phone,
        "matchedPayerName": matched_name,
        "matchedPayerPhone": matched_phone,
        "phoneNumberToUse": matched_phone,
        "phoneNumberSource": source,
    })
}

/// A Switchboard whose demo account has exactly `features`.
async fn app_with_features(features: &[&str]) -> TestApp {
    let mut config = TestConfig::default();
    config.features(features);
    spawn_app_with(&config).await
}

/// Lookup on, and nothing else (no member-ID or per-payer rules in the way).
async fn lookup_app() -> TestApp {
    app_with_features(&["payer_phone_lookup"]).await
}

/// `POST /v1/requests`: status and body.
async fn create(app: &TestApp, token: &str, body: &Value) -> (u16, Value) {
    status_and_json(
        app.client
            .post(app.url("/v1/requests"))
            .bearer_auth(token)
            .json(body)
            .send()
            .await
            .unwrap(),
    )
    .await
}

/// `POST /v1/requests` that must succeed: its `payerLookup`.
async fn created_lookup(app: &TestApp, token: &str, body: &Value) -> Value {
    let (status, created) = create(app, token, body).await;
    assert_eq!(status, 200, "create {body}: {created}");
    created["payerLookup"].clone()
}

/// `GET /v1/requests` for today (the manual clock's day): the entries.
async fn listed(app: &TestApp, token: &str) -> Vec<Value> {
    let (status, body) = status_and_json(app.get("/v1/requests", token).await).await;
    assert_eq!(status, 200, "{body}");
    body["requests"].as_array().unwrap().clone()
}

/// `POST /v1/schemas/{schemaId}/required-payer-inputs`.
async fn required_payer_inputs(
    app: &TestApp,
    token: Option<&str>,
    schema_id: &str,
    body: &Value,
) -> (u16, Value) {
    let mut request = app
        .client
        .post(app.url(&format!("/v1/schemas/{schema_id}/required-payer-inputs")));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    status_and_json(request.json(body).send().await.unwrap()).await
}

/// Asserts `{ "error": code, "message": <non-empty string> }` and nothing else.
fn assert_envelope(body: &Value, code: &str) {
    let object = body.as_object().unwrap_or_else(|| panic!("{body}"));
    let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["error", "message"], "{body}");
    assert_eq!(body["error"], code, "{body}");
    assert!(
        !body["message"].as_str().unwrap().trim().is_empty(),
        "{body}"
    );
}

#[actix_web::test]
async fn the_payer_lookup_object_is_on_the_create_response_and_on_both_reads_when_lookup_is_enabled(
) {
    let app = lookup_app().await;
    let token = app.live_token().await;
    let cases = [
        (
            vob_request("UHC", Some(SUPPLIED), "W123456789"),
            input_lookup("UHC", SUPPLIED),
        ),
        (
            vob_request("UHC", None, "W123456789"),
            matched_lookup(
                "UHC",
                None,
                "UnitedHealthcare",
                UHC_DIRECTORY,
                "switchboard",
            ),
        ),
        (
            vob_request("Aetna", None, "W123456789"),
            matched_lookup("Aetna", None, "Aetna", AETNA_PHONE_BOOK, "phoneBook"),
        ),
    ];
    for (body, expected) in &cases {
        let (status, created) = create(&app, &token, body).await;
        assert_eq!(status, 200, "{created}");
        assert_eq!(&created["payerLookup"], expected, "create response");
        let id = created["requestId"].as_str().unwrap();

        let (status, read) =
            status_and_json(app.get(&format!("/v1/requests/{id}"), &token).await).await;
        assert_eq!(status, 200, "{read}");
        assert_eq!(&read["payerLookup"], expected, "single read");

        let entries = listed(&app, &token).await;
        let entry = entries
            .iter()
            .find(|e| e["requestId"] == id)
            .unwrap_or_else(|| panic!("{id} is not listed"));
        assert_eq!(&entry["payerLookup"], expected, "list entry");
    }
}

#[actix_web::test]
async fn without_lookup_there_is_no_payer_lookup_anywhere_the_flag_is_ignored_and_phone_number_is_required(
) {
    let app = app_with_features(&[]).await;
    let token = app.live_token().await;

    let body = with_flag(vob_request("UHC", Some(SUPPLIED), "W123456789"), true);
    let (status, created) = create(&app, &token, &body).await;
    assert_eq!(status, 200, "{created}");
    assert!(created.get("payerLookup").is_none(), "{created}");
    let id = created["requestId"].as_str().unwrap();
    let (status, read) =
        status_and_json(app.get(&format!("/v1/requests/{id}"), &token).await).await;
    assert_eq!(status, 200, "{read}");
    assert!(read.get("payerLookup").is_none(), "{read}");
    assert_eq!(read["inputs"]["phoneNumber"], SUPPLIED);
    let entries = listed(&app, &token).await;
    assert_eq!(entries.len(), 1);
    assert!(entries[0].get("payerLookup").is_none(), "{}", entries[0]);

    // The flag cannot stand in for a number: phoneNumber stays required.
    for flag in [false, true] {
        let body = with_flag(vob_request("UHC", None, "W123456789"), flag);
        let (status, rejected) = create(&app, &token, &body).await;
        assert_eq!(status, 400, "{rejected}");
        assert_eq!(rejected["error"], "INVALID_INPUTS");
        assert_eq!(
            rejected["details"],
            json!({ "missingInputs": ["phoneNumber"], "invalidInputs": {} })
        );
    }
    assert_eq!(listed(&app, &token).await.len(), 1, "nothing more created");
}

#[actix_web::test]
async fn a_supplied_phone_number_is_dialed_exactly_as_supplied_by_default() {
    let app = lookup_app().await;
    let token = app.live_token().await;
    for phone in [SUPPLIED, "888-555-0100", "+1 888 555 0100", "8885550100"] {
        // Matched or not, with the flag absent or false, the supplied number wins.
        for payer in ["UHC", "Aetna", "Zorblax Mutual"] {
            let plain = vob_request(payer, Some(phone), "W123456789");
            assert_eq!(
                created_lookup(&app, &token, &plain).await,
                input_lookup(payer, phone),
                "{payer} {phone} without the flag"
            );
            let unflagged = with_flag(plain, false);
            assert_eq!(
                created_lookup(&app, &token, &unflagged).await,
                input_lookup(payer, phone),
                "{payer} {phone} with the flag false"
            );
        }
    }
}

#[actix_web::test]
async fn the_flag_inside_inputs_has_no_effect() {
    let app = lookup_app().await;
    let token = app.live_token().await;
    let mut body = vob_request("UHC", Some(SUPPLIED), "W123456789");
    body["inputs"]["useMatchedPayerPhone"] = json!("true");
    assert_eq!(
        created_lookup(&app, &token, &body).await,
        input_lookup("UHC", SUPPLIED)
    );
}

#[actix_web::test]
async fn the_flag_with_a_directory_match_dials_the_directory_number_with_source_switchboard() {
    let app = lookup_app().await;
    let token = app.live_token().await;
    let body = with_flag(vob_request("UHC", Some(SUPPLIED), "W123456789"), true);
    assert_eq!(
        created_lookup(&app, &token, &body).await,
        matched_lookup(
            "UHC",
            Some(SUPPLIED),
            "UnitedHealthcare",
            UHC_DIRECTORY,
            "switchboard"
        )
    );
}

#[actix_web::test]
async fn the_flag_with_a_phone_book_match_dials_the_accounts_override_with_source_phone_book() {
    let app = lookup_app().await;
    let token = app.live_token().await;
    let body = with_flag(vob_request("Aetna", Some(SUPPLIED), "W123456789"), true);
    let lookup = created_lookup(&app, &token, &body).await;
    assert_eq!(
        lookup,
        matched_lookup(
            "Aetna",
            Some(SUPPLIED),
            "Aetna",
            AETNA_PHONE_BOOK,
            "phoneBook"
        )
    );
    assert_ne!(lookup["phoneNumberToUse"], AETNA_DIRECTORY);
}

#[actix_web::test]
async fn the_flag_without_a_match_dials_the_supplied_number_without_error() {
    let app = lookup_app().await;
    let token = app.live_token().await;
    let body = with_flag(
        vob_request("Zorblax Mutual", Some(SUPPLIED), "W123456789"),
        true,
    );
    assert_eq!(
        created_lookup(&app, &token, &body).await,
        input_lookup("Zorblax Mutual", SUPPLIED)
    );
}

#[actix_web::test]
async fn an_omitted_phone_number_dials_the_matched_number_whatever_the_flag() {
    let app = lookup_app().await;
    let token = app.live_token().await;
    let expectations = [
        (
            "UHC",
            matched_lookup(
                "UHC",
                None,
                "UnitedHealthcare",
                UHC_DIRECTORY,
                "switchboard",
            ),
        ),
        (
            "Aetna",
            matched_lookup("Aetna", None, "Aetna", AETNA_PHONE_BOOK, "phoneBook"),
        ),
    ];
    for (payer, expected) in &expectations {
        let plain = vob_request(payer, None, "W123456789");
        for body in [
            plain.clone(),
            with_flag(plain.clone(), false),
            with_flag(plain.clone(), true),
        ] {
            assert_eq!(
                &created_lookup(&app, &token, &body).await,
                expected,
                "{body}"
            );
        }
    }
}

#[actix_web::test]
async fn a_member_id_prefix_steers_a_family_name_to_its_regional_plan_and_the_phone_book_still_comes_first(
) {
    let app = lookup_app().await;
    let token = app.live_token().await;
    // Illinois has no phone-book override: its directory number.
    let body = vob_request("Blue Cross Blue Shield", None, "XOF123456789");
    assert_eq!(
        created_lookup(&app, &token, &body).await,
        matched_lookup(
            "Blue Cross Blue Shield",
            None,
            "Blue Cross Blue Shield of Illinois",
            BCBS_IL_DIRECTORY,
            "switchboard"
        )
    );
    // Texas is overridden by the demo phone book: the override wins over the directory.
    let body = vob_request("Blue Cross Blue Shield", None, "ZGT123456789");
    let lookup = created_lookup(&app, &token, &body).await;
    assert_eq!(
        lookup,
        matched_lookup(
            "Blue Cross Blue Shield",
            None,
            "Blue Cross Blue Shield of Texas",
            BCBS_TX_PHONE_BOOK,
            "phoneBook"
        )
    );
    assert_ne!(lookup["phoneNumberToUse"], BCBS_TX_DIRECTORY);
    // The same steering with the flag and a supplied number.
    let body = with_flag(vob_request("BCBS", Some(SUPPLIED), "XOF987654321"), true);
    assert_eq!(
        created_lookup(&app, &token, &body).await,
        matched_lookup(
            "BCBS",
            Some(SUPPLIED),
            "Blue Cross Blue Shield of Illinois",
            BCBS_IL_DIRECTORY,
            "switchboard"
        )
    );
}

#[actix_web::test]
async fn a_family_name_without_a_steering_member_id_is_payer_not_found_rather_than_a_guess() {
    let app = lookup_app().await;
    let token = app.live_token().await;
    // "Blue Cross Blue Shield" names a dozen plans; a member ID without a known plan prefix picks none.
    let body = vob_request("Blue Cross Blue Shield", None, "W123456789");
    let (status, rejected) = create(&app, &token, &body).await;
    assert_eq!(status, 400, "{rejected}");
    assert_envelope(&rejected, "PAYER_NOT_FOUND");
}

#[actix_web::test]
async fn name_variants_and_acronyms_resolve_without_an_exact_string_match() {
    let app = lookup_app().await;
    let token = app.live_token().await;
    let cases = [
        (
            "bcbs il",
            "Blue Cross Blue Shield of Illinois",
            BCBS_IL_DIRECTORY,
            "switchboard",
        ),
        (
            "BCBS Illinois",
            "Blue Cross Blue Shield of Illinois",
            BCBS_IL_DIRECTORY,
            "switchboard",
        ),
        (
            "United Health Care",
            "UnitedHealthcare",
            UHC_DIRECTORY,
            "switchboard",
        ),
        (
            "united healthcare",
            "UnitedHealthcare",
            UHC_DIRECTORY,
            "switchboard",
        ),
        ("uhc", "UnitedHealthcare", UHC_DIRECTORY, "switchboard"),
        ("AETNA INC.", "Aetna", AETNA_PHONE_BOOK, "phoneBook"),
        ("aetna", "Aetna", AETNA_PHONE_BOOK, "phoneBook"),
    ];
    for (name, matched, phone, source) in cases {
        let body = vob_request(name, None, "W123456789");
        assert_eq!(
            created_lookup(&app, &token, &body).await,
            matched_lookup(name, None, matched, phone, source),
            "{name}"
        );
    }
}

#[actix_web::test]
async fn the_phone_book_overrides_its_payer_however_the_client_writes_the_name() {
    let app = lookup_app().await;
    let token = app.live_token().await;
    // Directory aliases and spellings of overridden payers still dial the override, never the directory.
    let cases = [
        ("Aetna Health", "Aetna", AETNA_PHONE_BOOK),
        ("Aetna Commercial", "Aetna", AETNA_PHONE_BOOK),
        (
            "BCBS TX",
            "Blue Cross Blue Shield of Texas",
            BCBS_TX_PHONE_BOOK,
        ),
        (
            "BCBSTX",
            "Blue Cross Blue Shield of Texas",
            BCBS_TX_PHONE_BOOK,
        ),
        (
            "Blue Cross Texas",
            "Blue Cross Blue Shield of Texas",
            BCBS_TX_PHONE_BOOK,
        ),
    ];
    for (name, matched, phone) in cases {
        let body = vob_request(name, None, "W123456789");
        assert_eq!(
            created_lookup(&app, &token, &body).await,
            matched_lookup(name, None, matched, phone, "phoneBook"),
            "{name}"
        );
    }
}

#[actix_web::test]
async fn lookup_works_alongside_the_full_demo_feature_set() {
    let app = spawn_app().await;
    let token = app.live_token().await;
    // Member-ID validation and per-payer required inputs (groupNumber for BCBS of Illinois) are satisfied.
    let body = vob_request("Blue Cross Blue Shield", None, "XOF123456789");
    assert_eq!(
        created_lookup(&app, &token, &body).await,
        matched_lookup(
            "Blue Cross Blue Shield",
            None,
            "Blue Cross Blue Shield of Illinois",
            BCBS_IL_DIRECTORY,
            "switchboard"
        )
    );
    let body = with_flag(vob_request("UHC", Some(SUPPLIED), "W123456789"), true);
    assert_eq!(
        created_lookup(&app, &token, &body).await,
        matched_lookup(
            "UHC",
            Some(SUPPLIED),
            "UnitedHealthcare",
            UHC_DIRECTORY,
            "switchboard"
        )
    );
}

#[actix_web::test]
async fn an_unknown_payer_without_a_phone_number_is_payer_not_found_and_nothing_is_created() {
    let app = lookup_app().await;
    let token = app.live_token().await;
    for flag in [None, Some(false), Some(true)] {
        let mut body = vob_request("Zorblax Mutual", None, "W123456789");
        if let Some(flag) = flag {
            body = with_flag(body, flag);
        }
        let (status, rejected) = create(&app, &token, &body).await;
        assert_eq!(status, 400, "{rejected}");
        assert_envelope(&rejected, "PAYER_NOT_FOUND");
    }
    assert_eq!(listed(&app, &token).await, Vec::<Value>::new());
}

/// Adds "Numberless Health" to the directory: a payer with no number on file.
async fn add_numberless_payer(app: &TestApp) {
    let response = app
        .admin(
            Method::PUT,
            "/admin/v1/payers/Numberless%20Health",
            Some(json!({ "aliases": [] })),
        )
        .await;
    assert_eq!(response.status(), 200);
}

#[actix_web::test]
async fn a_matched_payer_without_a_number_on_file_is_a_payer_lookup_failure() {
    let app = lookup_app().await;
    let token = app.live_token().await;
    add_numberless_payer(&app).await;

    let body = vob_request("Numberless Health", None, "W123456789");
    let (status, rejected) = create(&app, &token, &body).await;
    assert_eq!(status, 500, "{rejected}");
    assert_envelope(&rejected, "PAYER_LOOKUP_FAILURE");
    assert_eq!(listed(&app, &token).await, Vec::<Value>::new());

    // A supplied number is still dialed as-is.
    let body = vob_request("Numberless Health", Some(SUPPLIED), "W123456789");
    assert_eq!(
        created_lookup(&app, &token, &body).await,
        input_lookup("Numberless Health", SUPPLIED)
    );
}

#[actix_web::test]
async fn a_batch_with_a_payer_lookup_failure_answers_500_per_entry_and_keeps_the_entries_created() {
    let app = lookup_app().await;
    let token = app.live_token().await;
    add_numberless_payer(&app).await;
    let good = vob_request("Aetna", Some(SUPPLIED), "W123456789");
    let failing = vob_request("Numberless Health", None, "W123456780");
    let body = json!({ "requests": [good, failing] });

    let (status, answer) = create(&app, &token, &body).await;

    // 500 with the per-entry body: the server-side failure surfaces as INVALID_REQUEST in its entry.
    assert_eq!(status, 500, "{answer}");
    let entries = answer["requests"]
        .as_array()
        .unwrap_or_else(|| panic!("{answer}"));
    assert_eq!(entries.len(), 2, "{answer}");
    assert_envelope(&entries[1], "INVALID_REQUEST");
    let created = entries[0]["requestId"].as_str().unwrap();
    // The successful entry is a real, persisted request.
    let (status, read) =
        status_and_json(app.get(&format!("/v1/requests/{created}"), &token).await).await;
    assert_eq!(status, 200, "{read}");
    let listed = listed(&app, &token).await;
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["requestId"], created);
}

#[actix_web::test]
async fn the_directory_source_carries_the_configured_product_word_in_lowercase() {
    let mut config = TestConfig::default();
    config
        .features(&["payer_phone_lookup"])
        .set("server.product_word", "Acme");
    let app = spawn_app_with(&config).await;
    // The product word also names the auth headers.
    let response = app
        .auth_with(&[("Acme-API-Key", LIVE_KEY), ("Acme-API-Secret", LIVE_SECRET)])
        .await;
    let (status, auth) = status_and_json(response).await;
    assert_eq!(status, 200, "{auth}");
    let token = auth["token"].as_str().unwrap().to_owned();
    let body = vob_request("UHC", None, "W123456789");
    let expected = matched_lookup("UHC", None, "UnitedHealthcare", UHC_DIRECTORY, "acme");
    let (status, created) = create(&app, &token, &body).await;
    assert_eq!(status, 200, "{created}");
    assert_eq!(created["payerLookup"], expected);
    let id = created["requestId"].as_str().unwrap();
    let (_, read) = status_and_json(app.get(&format!("/v1/requests/{id}"), &token).await).await;
    assert_eq!(read["payerLookup"], expected);
    // The other sources do not carry the product word.
    assert_eq!(
        created_lookup(&app, &token, &vob_request("Aetna", None, "W123456789")).await
            ["phoneNumberSource"],
        "phoneBook"
    );
    assert_eq!(
        created_lookup(
            &app,
            &token,
            &vob_request("UHC", Some(SUPPLIED), "W123456789")
        )
        .await["phoneNumberSource"],
        "input"
    );
}

#[actix_web::test]
async fn an_idempotent_replay_returns_the_original_payer_lookup_after_the_directory_number_changed()
{
    let app = lookup_app().await;
    let token = app.live_token().await;
    let mut body = vob_request("UHC", None, "W123456789");
    body["internalId"] = json!("replay-lookup-1");
    let original = matched_lookup(
        "UHC",
        None,
        "UnitedHealthcare",
        UHC_DIRECTORY,
        "switchboard",
    );
    let (status, first) = create(&app, &token, &body).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["payerLookup"], original);

    let response = app
        .admin(
            Method::PUT,
            "/admin/v1/payers/UnitedHealthcare",
            Some(json!({
                "aliases": ["UHC", "United Healthcare", "United Health Care", "UnitedHealth"],
                "phone": "8775550199",
                "required_inputs": ["groupNumber"],
                "electronic": true,
            })),
        )
        .await;
    assert_eq!(response.status(), 200);

    // A new request sees the new number...
    let mut fresh = vob_request("UHC", None, "W123456789");
    fresh["internalId"] = json!("replay-lookup-2");
    assert_eq!(
        created_lookup(&app, &token, &fresh).await,
        matched_lookup("UHC", None, "UnitedHealthcare", "8775550199", "switchboard")
    );
    // ...the replay answers with the original request and its original lookup.
    let (status, replay) = create(&app, &token, &body).await;
    assert_eq!(status, 200, "{replay}");
    assert_eq!(replay, first);
    let id = first["requestId"].as_str().unwrap();
    let (_, read) = status_and_json(app.get(&format!("/v1/requests/{id}"), &token).await).await;
    assert_eq!(read["payerLookup"], original);
    assert_eq!(listed(&app, &token).await.len(), 2);
}

#[actix_web::test]
async fn an_idempotent_replay_returns_the_original_even_when_the_lookup_would_now_fail() {
    let app = lookup_app().await;
    let token = app.live_token().await;
    let mut body = vob_request("UHC", None, "W123456789");
    body["internalId"] = json!("replay-lookup-3");
    let (status, first) = create(&app, &token, &body).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(
        first["payerLookup"],
        matched_lookup(
            "UHC",
            None,
            "UnitedHealthcare",
            UHC_DIRECTORY,
            "switchboard"
        )
    );

    // The directory loses UnitedHealthcare's number: a new request is a lookup failure...
    let response = app
        .admin(
            Method::PUT,
            "/admin/v1/payers/UnitedHealthcare",
            Some(json!({ "aliases": ["UHC"] })),
        )
        .await;
    assert_eq!(response.status(), 200);
    let mut fresh = body.clone();
    fresh["internalId"] = json!("replay-lookup-4");
    let (status, rejected) = create(&app, &token, &fresh).await;
    assert_eq!(status, 500, "{rejected}");
    assert_envelope(&rejected, "PAYER_LOOKUP_FAILURE");

    // ...but the replay still answers with the original request, silently.
    let (status, replay) = create(&app, &token, &body).await;
    assert_eq!((status, replay), (200, first));
    assert_eq!(listed(&app, &token).await.len(), 1);
}

#[actix_web::test]
async fn batch_entries_carry_their_own_payer_lookup_or_their_own_lookup_error() {
    let app = lookup_app().await;
    for token in [app.live_token().await, app.sandbox_token().await] {
        let body = json!({ "requests": [
            vob_request("UHC", None, "W123456789"),
            vob_request("Zorblax Mutual", None, "W123456789"),
            with_flag(vob_request("Aetna", Some(SUPPLIED), "W123456789"), true),
        ] });
        let (status, out) = create(&app, &token, &body).await;
        assert_eq!(status, 207, "{out}");
        let entries = out["requests"].as_array().unwrap();
        assert_eq!(entries.len(), 3, "{out}");
        assert_eq!(
            entries[0]["payerLookup"],
            matched_lookup(
                "UHC",
                None,
                "UnitedHealthcare",
                UHC_DIRECTORY,
                "switchboard"
            )
        );
        assert_envelope(&entries[1], "PAYER_NOT_FOUND");
        assert_eq!(
            entries[2]["payerLookup"],
            matched_lookup(
                "Aetna",
                Some(SUPPLIED),
                "Aetna",
                AETNA_PHONE_BOOK,
                "phoneBook"
            )
        );
    }
}

// ---- POST /v1/schemas/{schemaId}/required-payer-inputs (4.5) ----

#[actix_web::test]
async fn required_payer_inputs_is_forbidden_without_the_per_payer_feature() {
    let app = lookup_app().await;
    let token = app.live_token().await;
    let (status, body) = required_payer_inputs(
        &app,
        Some(&token),
        "vob-basic",
        &json!({ "payerNames": ["UHC"] }),
    )
    .await;
    assert_eq!(status, 403, "{body}");
    assert_envelope(&body, "PAYER_REQUIRED_INPUTS_DISABLED");
}

#[actix_web::test]
async fn required_payer_inputs_resolves_every_name_in_order_one_to_one_without_de_duplication() {
    let app = spawn_app().await;
    let token = app.live_token().await;
    let names = [
        "UHC",
        "UHC",
        "AETNA INC.",
        "   ",
        "",
        "Zorblax Mutual",
        "bcbs il",
        "TRICARE East",
        "United Health Care",
        " UHC ",
        "\tZorblax Mutual ",
    ];
    let (status, body) = required_payer_inputs(
        &app,
        Some(&token),
        "vob-basic",
        &json!({ "payerNames": names }),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let payers = body["payers"].as_array().unwrap();
    assert_eq!(payers.len(), names.len(), "{body}");

    // Error entries: a message is there, its wording is free.
    for (at, code) in [
        (3, Some("INVALID_PAYER_NAME")),
        (4, Some("INVALID_PAYER_NAME")),
        (5, None),
        (10, None),
    ] {
        let entry = payers[at].as_object().unwrap();
        let mut keys: Vec<&str> = entry.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            ["errorCode", "inputPayerName", "message"],
            "{}",
            payers[at]
        );
        assert_eq!(entry["inputPayerName"], names[at].trim());
        assert!(entry["errorCode"].as_str().is_some_and(|c| !c.is_empty()));
        if let Some(code) = code {
            assert_eq!(entry["errorCode"], code);
        }
        assert!(entry["message"]
            .as_str()
            .is_some_and(|m| !m.trim().is_empty()));
    }
    let mut without_messages = body.clone();
    for at in [3, 4, 5, 10] {
        without_messages["payers"][at]["message"] = json!("<message>");
    }
    let matched = |input: &str, name: &str, fields: &[&str]| json!({ "inputPayerName": input, "matchedPayerName": name, "payerRequiredInputs": { "fields": fields } });
    let error = |input: &str, code: &Value| json!({ "inputPayerName": input, "errorCode": code, "message": "<message>" });
    assert_eq!(
        without_messages,
        json!({
            "schemaId": "vob-basic",
            "requiredInputs": { "fields": [
                "billingProviderNpi", "memberId", "patientDateOfBirth", "patientFirstName", "patientLastName",
                "payerName",
            ] },
            "optionalInputs": { "fields": [
                "billingProviderTaxId", "callbackPhoneNumber", "cptCode", "dateOfService", "diagnosisCode",
                "groupNumber", "isPrimaryPolicy", "memberDateOfBirth", "memberFirstName", "memberLastName",
                "patientRelationshipToMember", "phoneNumber", "placeOfService", "renderingProviderNpi",
                "serviceType",
            ] },
            "payers": [
                matched("UHC", "UnitedHealthcare", &["groupNumber"]),
                matched("UHC", "UnitedHealthcare", &["groupNumber"]),
                matched("AETNA INC.", "Aetna", &[]),
                // Echoed trimmed: a blank entry comes back as "".
                error("", &json!("INVALID_PAYER_NAME")),
                error("", &json!("INVALID_PAYER_NAME")),
                error("Zorblax Mutual", &payers[5]["errorCode"]),
                matched("bcbs il", "Blue Cross Blue Shield of Illinois", &["groupNumber"]),
                matched("TRICARE East", "TRICARE East Region", &["memberDateOfBirth", "memberFirstName", "memberLastName"]),
                matched("United Health Care", "UnitedHealthcare", &["groupNumber"]),
                matched("UHC", "UnitedHealthcare", &["groupNumber"]),
                error("Zorblax Mutual", &payers[10]["errorCode"]),
            ],
        })
    );

    // The resolved phone number is deliberately omitted: no phone key, no directory or phone-book number.
    for entry in payers {
        assert!(
            entry
                .as_object()
                .unwrap()
                .keys()
                .all(|k| !k.to_lowercase().contains("phone")),
            "{entry}"
        );
    }
    let text = body.to_string();
    for number in [
        UHC_DIRECTORY,
        AETNA_DIRECTORY,
        AETNA_PHONE_BOOK,
        BCBS_IL_DIRECTORY,
        "8005550150",
    ] {
        assert!(!text.contains(number), "{number} leaked: {text}");
    }
}

#[actix_web::test]
async fn required_payer_inputs_accepts_fifty_names_and_rejects_fifty_one_empty_or_missing_lists() {
    let app = spawn_app().await;
    let token = app.live_token().await;
    let fifty = vec!["UHC"; 50];
    let (status, body) = required_payer_inputs(
        &app,
        Some(&token),
        "vob-basic",
        &json!({ "payerNames": fifty }),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["payers"].as_array().unwrap().len(), 50);

    let fifty_one = vec!["UHC"; 51];
    for (description, request) in [
        ("51 names", json!({ "payerNames": fifty_one })),
        ("no names", json!({ "payerNames": [] })),
        ("payerNames missing", json!({})),
        ("payerNames null", json!({ "payerNames": null })),
        ("payerNames not an array", json!({ "payerNames": "UHC" })),
    ] {
        let (status, body) = required_payer_inputs(&app, Some(&token), "vob-basic", &request).await;
        assert_eq!(status, 400, "{description}: {body}");
        assert_envelope(&body, "INVALID_REQUEST");
    }
}

#[actix_web::test]
async fn required_payer_inputs_checks_the_schema_id_and_the_bearer_token() {
    let app = spawn_app().await;
    let token = app.live_token().await;
    let request = json!({ "payerNames": ["UHC"] });
    for bad in ["_x", ".x", "%20"] {
        let (status, body) = required_payer_inputs(&app, Some(&token), bad, &request).await;
        assert_eq!(status, 400, "{bad}: {body}");
        assert_envelope(&body, "INVALID_REQUEST");
    }
    let (status, body) =
        required_payer_inputs(&app, Some(&token), "no-such-schema", &request).await;
    assert_eq!(status, 404, "{body}");
    assert_envelope(&body, "SCHEMA_NOT_FOUND");

    let (status, body) = required_payer_inputs(&app, None, "vob-basic", &request).await;
    assert_eq!(status, 401, "{body}");
    assert_eq!(body["code"], 401, "{body}");
    assert!(body["message"].is_string(), "{body}");
    let (status, _) = required_payer_inputs(&app, Some("not-a-token"), "vob-basic", &request).await;
    assert_eq!(status, 401);
}

// ---- Legacy endpoints (9.4) ----

#[actix_web::test]
async fn legacy_endpoints_past_their_sunset_answer_410_naming_the_replacement() {
    let app = spawn_app().await;
    let token = app.live_token().await;
    let cases = [
        (Method::POST, "/v1/calls", "POST /v1/requests"),
        (Method::GET, "/v1/calls", "GET /v1/requests"),
        (Method::GET, "/v1/calls/abc", "GET /v1/requests/{requestId}"),
        (Method::GET, "/v1/scripts", "GET /v1/schemas"),
        (
            Method::GET,
            "/v1/scripts/x/required-inputs",
            "GET /v1/schemas/{schemaId}/required-inputs",
        ),
    ];
    for (method, path, replacement) in cases {
        let mut request = app
            .client
            .request(method.clone(), app.url(path))
            .bearer_auth(&token);
        if method == Method::POST {
            request = request.json(&json!({ "scriptId": "x", "to": "8885550100" }));
        }
        let (status, body) = status_and_json(request.send().await.unwrap()).await;
        assert_eq!(status, 410, "{method} {path}: {body}");
        assert_envelope(&body, "GONE");
        let message = body["message"].as_str().unwrap();
        assert!(
            message.contains(replacement),
            "{method} {path}: {message:?} does not name {replacement}"
        );
    }
}
