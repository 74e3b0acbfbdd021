//! The electronic channel through Stedi, black-box, against the local fake of `fakes/stedi.rs`: what the
//! clearinghouse receives (every property built from the inputs), what a request ends with (values,
//! modality, the phone taking what the answer leaves), failures that are "no answer" (AAA rejections,
//! throttling and server errors within the retry bound, a timeout, inputs it would reject), who never
//! reaches it (sandbox keys, accounts without the feature, payers without a clearinghouse id), and an API
//! key that never reaches the logs.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use crate::fakes::stedi::{FakeStedi, API_KEY, CLAIM_STATUS, ELIGIBILITY};
use crate::helpers::{
    binary, spawn_app_with, status_and_json, write_config, Api, TestApp, TestConfig,
};

/// A benefits schema whose only required field a 271 answers, so a request can end without a call.
const ELIGIBILITY_SCHEMA: &str = r#"
id = "eligibility-check"
name = "Eligibility check"
request_type = "vob"
version = 1
required_inputs = ["payerName", "phoneNumber", "memberId", "patientFirstName", "patientLastName",
                   "patientDateOfBirth", "billingProviderNpi"]
optional_inputs = ["dateOfService", "groupNumber", "billingProviderName"]
electronic_service_types = ["30", "MH"]

[[fields]]
name = "planActive"
label = "Plan active"
description = "Is the plan active?"
type = "boolean"
required = true
electronic = { benefit = "active_coverage" }

[[fields]]
name = "deductibleRemaining"
label = "Deductible remaining"
description = "How much of the individual in-network deductible remains?"
type = "dollar"
electronic = { benefit = "deductible", network = "in", coverage = "individual", amount = "remaining" }

[[fields]]
name = "coinsurance"
label = "Coinsurance"
description = "What coinsurance applies in network?"
type = "alphanumeric"
electronic = { benefit = "coinsurance", network = "in" }

[[fields]]
name = "coverageEnds"
label = "Coverage ends"
description = "When does coverage end?"
type = "date"
electronic = { plan = "end_date" }
"#;

pub(crate) fn inputs(member_id: &str) -> Value {
    json!({
        "payerName": "Aetna",
        "phoneNumber": "8005550101",
        "memberId": member_id,
        "patientFirstName": "Jane",
        "patientLastName": "Doe",
        "patientDateOfBirth": "03/14/1971",
        "billingProviderNpi": "1999999984",
        "dateOfService": "2026-11-20",
        "groupNumber": "G-77",
    })
}

fn claim_inputs(member_id: &str) -> Value {
    let mut inputs = inputs(member_id);
    inputs["billingProviderTaxId"] = json!("123456789");
    inputs["claimNumber"] = json!("CLM-2026-1");
    inputs["claimChargeAmount"] = json!("267.54");
    inputs
}

pub(crate) fn config(fake: &FakeStedi) -> TestConfig {
    let mut config = TestConfig::default();
    config
        .dispatching()
        .set("electronic.kind", "stedi")
        .set("electronic.stedi.api_key", API_KEY)
        .set("electronic.stedi.base_url", fake.base_url.as_str())
        .set("electronic.stedi.timeout_ms", 1_000)
        .set("electronic.stedi.retry_backoff_ms", vec![20, 20, 20])
        .push("schemas", ELIGIBILITY_SCHEMA)
        .features(&["electronic_channels"]);
    let schemas = config.demo_account()["schemas"].as_array_mut().unwrap();
    schemas.push("eligibility-check".into());
    config
}

pub(crate) async fn create(app: &TestApp, token: &str, schema: &str, inputs: Value) -> String {
    let response = app
        .client
        .post(app.url("/v1/requests"))
        .bearer_auth(token)
        .json(&json!({ "schemaId": schema, "inputs": inputs }))
        .send()
        .await
        .unwrap();
    let (status, body) = status_and_json(response).await;
    assert_eq!(status, 200, "{body}");
    body["requestId"].as_str().unwrap().to_owned()
}

async fn run(app: &TestApp, schema: &str, inputs: Value) -> Value {
    let token = app.live_token().await;
    let id = create(app, &token, schema, inputs).await;
    app.wait_terminal(&token, &id).await
}

/// The console's electronic trace of a request.
async fn trace(app: &TestApp, id: &str) -> Value {
    let response = app
        .client
        .get(app.url(&format!(
            "/console/api/requests/{id}?account=demo&environment=production"
        )))
        .bearer_auth(crate::helpers::ADMIN_TOKEN)
        .send()
        .await
        .unwrap();
    let (status, body) = status_and_json(response).await;
    assert_eq!(status, 200, "{body}");
    body["electronic"].clone()
}

#[actix_web::test]
async fn an_eligibility_inquiry_carries_the_inputs_and_a_full_answer_ends_digital_only() {
    let fake = FakeStedi::start().await;
    let app = spawn_app_with(&config(&fake)).await;
    let read = run(&app, "eligibility-check", inputs("W123456789")).await;

    let received = fake.received();
    assert_eq!(received.len(), 1, "one inquiry: {received:?}");
    let inquiry = &received[0];
    assert!(inquiry.path.ends_with(ELIGIBILITY), "{}", inquiry.path);
    assert_eq!(inquiry.authorization.as_deref(), Some(API_KEY));
    // No controlNumber: deprecated by Stedi, which makes the interchange's own.
    assert_eq!(
        inquiry.body,
        json!({
            "tradingPartnerServiceId": "60054",
            "provider": { "npi": "1999999984", "organizationName": "Demo Family Medicine" },
            "subscriber": {
                "memberId": "W123456789", "firstName": "Jane", "lastName": "Doe",
                "dateOfBirth": "19710314", "groupNumber": "G-77"
            },
            "encounter": { "dateOfService": "20261120", "serviceTypeCodes": ["30", "MH"] }
        })
    );

    assert_eq!(read["state"], "SUCCESS", "{read}");
    assert_eq!(read["modality"], "digital_only");
    assert_eq!(read["data_completeness"], "minimum");
    assert_eq!(
        read["results"],
        json!({
            "planActive": "true", "deductibleRemaining": "1100.00", "coinsurance": "20%",
            "coverageEnds": "2026-12-31"
        })
    );
    let summary = read["resultSummary"].as_str().unwrap();
    for expected in [
        "Plan active: yes",
        "Deductible remaining: $1100.00",
        "Coinsurance: 20%",
        "ec_",
    ] {
        assert!(summary.contains(expected), "{expected} in {summary}");
    }
    for absent in [
        "callSteps",
        "contributingCalls",
        "resultSources",
        "callSummary",
    ] {
        assert!(read.get(absent).is_none(), "{absent}: {read}");
    }

    let trace = trace(&app, read["requestId"].as_str().unwrap()).await;
    assert_eq!(trace["channel"], "stedi");
    assert_eq!(trace["outcome"], "answered");
    assert!(trace["transactionId"].as_str().unwrap().starts_with("ec_"));
    assert_eq!(trace["fields"]["planActive"], "EB 1 - W - STC 30");
    assert_eq!(
        trace["fields"]["deductibleRemaining"],
        "EB C IND Y 29 STC 30"
    );
}

#[actix_web::test]
async fn the_demo_benefits_schema_takes_the_answer_and_calls_only_for_the_rest() {
    let fake = FakeStedi::start().await;
    let app = spawn_app_with(&config(&fake)).await;
    let read = run(&app, "vob-basic", inputs("W123456789")).await;
    assert_eq!(read["modality"], "digital_plus_phone", "{read}");
    assert_eq!(read["data_completeness"], Value::Null);
    assert_eq!(read["resultSummary"], Value::Null);
    let results = &read["results"];
    assert_eq!(results["planActive"], "true");
    assert_eq!(results["individualDeductible"], "1500.00");
    assert_eq!(results["individualDeductibleMet"], "400.00");
    assert_eq!(results["familyDeductible"], "3000.00");
    assert_eq!(results["outOfPocketMax"], "6850.00");
    assert_eq!(results["outOfPocketMet"], "1294.84");
    assert_eq!(results["copayAmount"], "25.00");
    assert_eq!(results["effectiveDate"], "2026-01-01");
    assert!(
        results.get("terminationDate").is_none(),
        "asked only when the plan is inactive"
    );
    if read["state"] == "SUCCESS" {
        let sources = read["resultSources"].as_object().unwrap();
        assert!(sources.contains_key("callReferenceNumber"), "{read}");
        for electronic in ["planActive", "individualDeductible", "copayAmount"] {
            assert!(
                !sources.contains_key(electronic),
                "phone-call sources only: {read}"
            );
        }
    }
}

#[actix_web::test]
async fn inactive_coverage_is_answered_false_with_its_dates() {
    let fake = FakeStedi::start().await;
    let app = spawn_app_with(&config(&fake)).await;
    let read = run(&app, "eligibility-check", inputs("INACTIVE1")).await;
    assert_eq!(read["modality"], "digital_only", "{read}");
    assert_eq!(
        read["results"],
        json!({ "planActive": "false", "coverageEnds": "2026-06-30" })
    );
}

#[actix_web::test]
async fn rejections_throttling_outages_and_timeouts_are_no_answer_and_the_phone_takes_everything() {
    let fake = FakeStedi::start().await;
    let app = spawn_app_with(&config(&fake)).await;
    // (member id, inquiries the fake sees, outcome in the trace, fields filled electronically)
    let cases = [
        (
            "AAA75",
            1,
            "rejected: AAA 75 Subscriber/Insured Not Found",
            false,
        ),
        (
            "AAA44",
            1,
            "rejected: AAA 44 Invalid/Missing Provider Name",
            false,
        ),
        ("BUSY2", 3, "answered", true),
        ("DOWN1", 2, "answered", true),
        (
            "DOWNALL",
            4,
            "unavailable after 4 attempts (last: 502)",
            false,
        ),
        ("SLOW1", 1, "timed out", false),
    ];
    for (member, attempts, outcome, filled) in cases {
        let before = fake.received().len();
        let read = run(&app, "eligibility-check", inputs(member)).await;
        let seen = fake.received()[before..]
            .iter()
            .filter(|r| r.body["subscriber"]["memberId"] == member)
            .count();
        assert_eq!(seen, attempts, "{member}");
        let trace = trace(&app, read["requestId"].as_str().unwrap()).await;
        assert_eq!(trace["outcome"], outcome, "{member}");
        if filled {
            assert_eq!(read["modality"], "digital_only", "{member}: {read}");
        } else {
            assert_eq!(read["modality"], "phone_only", "{member}: {read}");
            assert!(trace["fields"].as_object().unwrap().is_empty(), "{member}");
            assert!(
                read["callSteps"].is_array(),
                "{member}: the phone ran: {read}"
            );
            let step = &read["callSteps"][0];
            assert_eq!(step["fieldsRequired"], 1, "the full required set: {read}");
        }
    }
}

#[actix_web::test]
async fn claim_status_answers_paid_denied_and_not_found_claims() {
    let fake = FakeStedi::start().await;
    let app = spawn_app_with(&config(&fake)).await;

    let paid = run(&app, "claim-status-basic", claim_inputs("W123456789")).await;
    let inquiry = fake.received().last().cloned().unwrap();
    assert!(inquiry.path.ends_with(CLAIM_STATUS));
    // No controlNumber (deprecated for claim status); the dates of service searched run a week before
    // the date of service (2026-11-20) to today on the server's clock (2026-11-23), not a week past it.
    assert_eq!(
        inquiry.body,
        json!({
            "tradingPartnerServiceId": "60054",
            "providers": [{
                "providerType": "BillingProvider", "npi": "1999999984",
                "organizationName": "Demo Family Medicine", "taxId": "123456789"
            }],
            "subscriber": {
                "memberId": "W123456789", "firstName": "Jane", "lastName": "Doe",
                "dateOfBirth": "19710314", "groupNumber": "G-77"
            },
            "encounter": {
                "beginningDateOfService": "20261113", "endDateOfService": "20261123",
                "tradingPartnerClaimNumber": "CLM-2026-1", "submittedAmount": "267.54"
            }
        })
    );
    assert_eq!(paid["modality"], "digital_plus_phone", "{paid}");
    let results = &paid["results"];
    for (field, value) in [
        ("claimStatus", "PAID"),
        ("paidAmount", "108.77"),
        ("paymentDate", "2026-10-17"),
        ("checkOrEftNumber", "123456789"),
        ("claimProcessedDate", "2026-10-15"),
        ("billedAmount", "267.54"),
        ("payerClaimNumber", "0123456789"),
    ] {
        assert_eq!(results[field], value, "{field}: {paid}");
    }
    for other in ["denialReason", "pendingReason"] {
        assert!(results.get(other).is_none(), "{other}: {paid}");
    }
    // The call asked only for the rest, and its summary states no other status (issue 13).
    if let Some(summary) = paid["callSummary"].as_str() {
        for status in ["DENIED", "Denied", "PENDING", "Pending", "In process"] {
            assert!(!summary.contains(status), "{summary}");
        }
    }

    let denied = run(&app, "claim-status-basic", claim_inputs("DENIED1")).await;
    assert_eq!(denied["results"]["claimStatus"], "DENIED", "{denied}");
    assert_eq!(denied["results"]["billedAmount"], "1101.00");
    assert!(denied["results"].get("paidAmount").is_none(), "{denied}");

    let missing = run(&app, "claim-status-basic", claim_inputs("NOTFOUND1")).await;
    assert_eq!(
        missing["results"]["claimStatus"], "NOT_ON_FILE",
        "{missing}"
    );
    assert!(
        missing["results"].get("billedAmount").is_none(),
        "{missing}"
    );
}

#[actix_web::test]
async fn sandbox_keys_accounts_without_the_feature_and_unmapped_payers_never_reach_stedi() {
    let fake = FakeStedi::start().await;
    let app = spawn_app_with(&config(&fake)).await;
    let sandbox = app.sandbox_token().await;
    let mut digital = inputs("W123456789");
    digital["sandboxScenario"] = json!("digital");
    let id = create(&app, &sandbox, "eligibility-check", digital).await;
    let read = app.wait_terminal(&sandbox, &id).await;
    assert_eq!(
        read["modality"], "digital_only",
        "the sandbox generator answered: {read}"
    );

    // Kaiser is not electronic; Oscar is electronic but has no clearinghouse payer id.
    for payer in ["Kaiser Permanente", "Oscar Health"] {
        let mut other = inputs("W123456789");
        other["payerName"] = json!(payer);
        let read = run(&app, "eligibility-check", other).await;
        assert_eq!(read["modality"], "phone_only", "{payer}: {read}");
    }
    assert!(fake.received().is_empty(), "{:?}", fake.received());

    let mut without = config(&fake);
    without.features(&[]);
    let app = spawn_app_with(&without).await;
    let read = run(&app, "eligibility-check", inputs("W123456789")).await;
    assert_eq!(read["modality"], "phone_only", "{read}");
    assert!(fake.received().is_empty(), "{:?}", fake.received());
}

#[actix_web::test]
async fn inputs_the_clearinghouse_would_reject_send_no_inquiry() {
    let fake = FakeStedi::start().await;
    let mut config = config(&fake);
    config.demo_account().remove("provider_name");
    let app = spawn_app_with(&config).await;
    let read = run(&app, "eligibility-check", inputs("W123456789")).await;
    assert_eq!(read["modality"], "phone_only", "{read}");
    assert!(fake.received().is_empty());
    let trace = trace(&app, read["requestId"].as_str().unwrap()).await;
    assert_eq!(
        trace["outcome"],
        "not sent: invalid provider.organizationName"
    );

    // A provider name in the inputs is enough.
    let mut named = inputs("W123456789");
    named["billingProviderName"] = json!("Input Clinic");
    let read = run(&app, "eligibility-check", named).await;
    assert_eq!(read["modality"], "digital_only", "{read}");
    assert_eq!(
        fake.received()[0].body["provider"]["organizationName"],
        "Input Clinic"
    );
}

#[actix_web::test]
async fn the_api_key_never_appears_in_the_servers_logs() {
    let fake = FakeStedi::start().await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = config(&fake);
    // A wrong key too: the refusal is logged, the key is not.
    config.set("electronic.stedi.retry_backoff_ms", vec![5]);
    let path = write_config(dir.path(), &config);
    let mut child = Command::new(binary())
        .args(["serve", "--config"])
        .arg(&path)
        .env("SWITCHBOARD_BIND", "127.0.0.1:0")
        .env("SWITCHBOARD_DATA_DIR", dir.path().join("data"))
        // Everything at debug and the HTTP client at its most verbose; sled's per-operation trace is left
        // out only because it slows the server to a crawl.
        .env(
            "RUST_LOG",
            "debug,sled=info,reqwest=trace,hyper=trace,hyper_util=trace",
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let logs = Arc::new(Mutex::new(String::new()));
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    let base = first
        .trim()
        .strip_prefix("Switchboard listening on ")
        .unwrap()
        .to_owned();
    for stream in [
        Box::new(stdout) as Box<dyn std::io::Read + Send>,
        Box::new(child.stderr.take().unwrap()),
    ] {
        let logs = Arc::clone(&logs);
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                logs.lock().unwrap().push_str(&line);
                logs.lock().unwrap().push('\n');
            }
        });
    }
    let api = Api::at(base);
    // On PostgreSQL the address is printed while the node still takes the lease.
    api.wait_ready().await;
    let token = api.live_token().await;
    let mut ids = vec![];
    for member in ["W123456789", "AAA75", "DOWNALL"] {
        let body = json!({ "schemaId": "eligibility-check", "inputs": inputs(member) });
        ids.push(api.create_request(&token, &body).await);
    }
    for id in &ids {
        api.wait_terminal(&token, id).await;
    }
    let _ = child.kill();
    let _ = child.wait();
    actix_web::rt::time::sleep(Duration::from_millis(100)).await;
    let logs = logs.lock().unwrap().clone();
    assert_eq!(fake.received().len(), 1 + 1 + 2, "the inquiries ran");
    let tail: String = logs.lines().rev().take(40).collect::<Vec<_>>().join("\n");
    assert!(
        logs.contains("clearinghouse inquiry finished"),
        "the logs were captured; last lines: {tail}"
    );
    assert!(!logs.contains(API_KEY), "the API key leaked into the logs");
    assert!(
        !logs.contains("W123456789"),
        "an input value leaked into the logs"
    );
}

#[actix_web::test]
async fn the_admin_api_takes_and_checks_the_same_mapping_and_stores_it_with_the_version() {
    let fake = FakeStedi::start().await;
    let app = spawn_app_with(&config(&fake)).await;
    let schema = |electronic: Value| {
        json!({
            "request_type": "vob",
            "electronic_service_types": ["30"],
            "fields": [{
                "name": "active", "label": "Active", "description": "Is the plan active?",
                "type": "boolean", "required": true, "electronic": electronic
            }]
        })
    };
    let (status, body) = status_and_json(
        app.admin(
            reqwest::Method::PUT,
            "/admin/v1/schemas/admin-eligibility",
            Some(schema(json!({ "benefit": "deductible" }))),
        )
        .await,
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body["message"],
        "fields[0].electronic: this element fills a dollar or alphanumeric field, not a boolean field"
    );
    let (status, body) = status_and_json(
        app.admin(
            reqwest::Method::PUT,
            "/admin/v1/schemas/admin-eligibility",
            Some(schema(json!({ "benefit": "active_coverage" }))),
        )
        .await,
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let stored = app
        .state
        .store
        .schema_version("admin-eligibility", 1)
        .await
        .unwrap()
        .unwrap();
    let mapping = serde_json::to_value(&stored.definition.electronic).unwrap();
    assert_eq!(
        mapping,
        json!({
            "service_type_codes": ["30"],
            "fields": { "active": { "benefit": {
                "benefit": "active_coverage", "network": null, "coverage": null, "amount": null
            } } }
        })
    );
}
