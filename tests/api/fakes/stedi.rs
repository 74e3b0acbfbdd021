//! A local Stedi: `POST /change/medicalnetwork/eligibility/v3` and `/claimstatus/v2` with the shapes of
//! Stedi's published OpenAPI (`healthcare.json` of `Stedi/openApi`). It checks the `Authorization` key,
//! answers missing or malformed required properties with a 400 `ValidationException` body
//! (`{ "code", "message" }`), and otherwise answers by the subscriber's member id, the way Stedi's test
//! mode answers predefined requests:
//!
//! | member id | eligibility answer | claim status answer |
//! |---|---|---|
//! | any other | active coverage with deductibles, out of pocket, co-pay, co-insurance | paid claim (F1) |
//! | `INACTIVE1` | inactive coverage (EB `6`) | |
//! | `AAA75` | 200 with AAA 75 (subscriber not found) | 200 with an `errorResponse` |
//! | `AAA44` | 400 with AAA 44 (provider name), as the OpenAPI's example | |
//! | `BUSY2` | 429 twice, then the active answer | |
//! | `DOWN1` | 503 once, then the active answer | |
//! | `DOWNALL` | 502 every time | |
//! | `SLOW1` | the active answer after 3 s | |
//! | `DENIED1` | | denied claim (F2) |
//! | `NOTFOUND1` | | claim not found (D0) |
//!
//! Every request is recorded (path, `Authorization` header, body), accepted or not.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use serde_json::{json, Value};

/// The key the fake accepts.
pub const API_KEY: &str = "test_stedi_key_4f9a2c7e1b";
/// The versioned base path, as in Stedi's server URL.
const VERSION: &str = "/2024-04-01";
pub const ELIGIBILITY: &str = "/change/medicalnetwork/eligibility/v3";
pub const CLAIM_STATUS: &str = "/change/medicalnetwork/claimstatus/v2";

/// One request the fake received.
#[derive(Clone, Debug)]
pub struct Received {
    pub path: String,
    pub authorization: Option<String>,
    pub body: Value,
}

#[derive(Default)]
struct State {
    received: Vec<Received>,
    seen_members: HashMap<String, u32>,
}

/// A running fake; its base URL goes into `[electronic.stedi] base_url`.
#[derive(Clone)]
pub struct FakeStedi {
    pub base_url: String,
    state: Arc<Mutex<State>>,
}

impl FakeStedi {
    pub async fn start() -> FakeStedi {
        let state = Arc::new(Mutex::new(State::default()));
        let shared = Arc::clone(&state);
        let server = HttpServer::new(move || {
            let state = Arc::clone(&shared);
            App::new()
                .app_data(web::Data::from(state))
                .app_data(web::PayloadConfig::new(1 << 20))
                .route(
                    &format!("{VERSION}{ELIGIBILITY}"),
                    web::post().to(eligibility),
                )
                .route(
                    &format!("{VERSION}{CLAIM_STATUS}"),
                    web::post().to(claim_status),
                )
        })
        .workers(2)
        .bind("127.0.0.1:0")
        .unwrap();
        let base_url = format!("http://{}{VERSION}", server.addrs()[0]);
        actix_web::rt::spawn(server.run());
        FakeStedi { base_url, state }
    }

    /// Everything received so far.
    pub fn received(&self) -> Vec<Received> {
        self.state.lock().unwrap().received.clone()
    }
}

async fn eligibility(
    req: HttpRequest,
    body: web::Bytes,
    state: web::Data<Mutex<State>>,
) -> HttpResponse {
    answer(req, body, state, Kind::Eligibility).await
}

async fn claim_status(
    req: HttpRequest,
    body: web::Bytes,
    state: web::Data<Mutex<State>>,
) -> HttpResponse {
    answer(req, body, state, Kind::ClaimStatus).await
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Eligibility,
    ClaimStatus,
}

async fn answer(
    req: HttpRequest,
    body: web::Bytes,
    state: web::Data<Mutex<State>>,
    kind: Kind,
) -> HttpResponse {
    let authorization = req
        .headers()
        .get("Authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let parsed: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let member = parsed["subscriber"]["memberId"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let seen = {
        let mut state = state.lock().unwrap();
        state.received.push(Received {
            path: req.path().to_owned(),
            authorization: authorization.clone(),
            body: parsed.clone(),
        });
        let seen = state.seen_members.entry(member.clone()).or_default();
        *seen += 1;
        *seen
    };
    if authorization.as_deref() != Some(API_KEY) {
        return HttpResponse::Forbidden().json(json!({
            "code": "AccessDeniedException",
            "message": "The API key is invalid or missing."
        }));
    }
    if let Some(problem) = validation_problem(&parsed, kind) {
        return HttpResponse::BadRequest().json(json!({
            "code": "ValidationException",
            "message": problem
        }));
    }
    match (member.as_str(), seen) {
        ("BUSY2", 1 | 2) => {
            return HttpResponse::TooManyRequests().json(json!({
                "code": "ThrottlingException", "message": "Rate exceeded"
            }))
        }
        ("DOWN1", 1) => {
            return HttpResponse::ServiceUnavailable().json(json!({
                "code": "ServiceUnavailableException", "message": "Service unavailable"
            }))
        }
        ("DOWNALL", _) => {
            return HttpResponse::BadGateway().json(json!({
                "code": "InternalFailureException", "message": "Bad gateway"
            }))
        }
        ("SLOW1", _) => actix_web::rt::time::sleep(Duration::from_secs(3)).await,
        _ => {}
    }
    // Stedi makes a control number of its own when the request carries none.
    let control = match &parsed["controlNumber"] {
        Value::Null => json!("000000001"),
        sent => sent.clone(),
    };
    match kind {
        Kind::Eligibility => eligibility_answer(&member, control, &parsed),
        Kind::ClaimStatus => claim_status_answer(&member, control, &parsed),
    }
}

/// Stedi's `ValidationException` for what its OpenAPI requires of the two requests.
fn validation_problem(body: &Value, kind: Kind) -> Option<String> {
    let text = |v: &Value| v.as_str().map(str::to_owned);
    let ymd =
        |v: &Value| text(v).is_some_and(|d| d.len() == 8 && d.bytes().all(|b| b.is_ascii_digit()));
    // Optional and deprecated in both requests (Stedi makes its own), but still checked when sent.
    if text(&body["controlNumber"]).is_some_and(|control| control.len() != 9) {
        return Some("controlNumber must be 9 characters".into());
    }
    if text(&body["tradingPartnerServiceId"]).is_none_or(|t| t.is_empty()) {
        return Some("tradingPartnerServiceId is required".into());
    }
    let subscriber = &body["subscriber"];
    for key in ["memberId", "firstName", "lastName"] {
        if text(&subscriber[key]).is_none_or(|v| v.is_empty()) {
            return Some(format!("subscriber.{key} is required"));
        }
    }
    if !ymd(&subscriber["dateOfBirth"]) {
        return Some("subscriber.dateOfBirth must match ^\\d{8}$".into());
    }
    let provider = match kind {
        Kind::Eligibility => body["provider"].clone(),
        Kind::ClaimStatus => {
            let providers = body["providers"].as_array().cloned().unwrap_or_default();
            let billing: Vec<&Value> = providers
                .iter()
                .filter(|p| p["providerType"] == "BillingProvider")
                .collect();
            if billing.len() != 1 {
                return Some("exactly one BillingProvider is required".into());
            }
            if !ymd(&body["encounter"]["beginningDateOfService"])
                || !ymd(&body["encounter"]["endDateOfService"])
            {
                return Some("encounter dates of service must match ^\\d{8}$".into());
            }
            if body["encounter"]["beginningDateOfService"].as_str()
                > body["encounter"]["endDateOfService"].as_str()
            {
                return Some("encounter.beginningDateOfService is after endDateOfService".into());
            }
            billing[0].clone()
        }
    };
    let npi = text(&provider["npi"]).unwrap_or_default();
    if npi.len() != 10 || !npi.bytes().all(|b| b.is_ascii_digit()) {
        return Some("provider.npi must match ^\\d{10}$".into());
    }
    if text(&provider["organizationName"]).is_none_or(|n| n.is_empty()) {
        return Some("provider.organizationName is required".into());
    }
    None
}

fn eb(code: &str, level: &str, network: &str, time: &str, amount: &str) -> Value {
    let mut entry = json!({
        "code": code, "serviceTypeCodes": ["30"], "serviceTypes": ["Health Benefit Plan Coverage"],
        "inPlanNetworkIndicatorCode": network
    });
    if !level.is_empty() {
        entry["coverageLevelCode"] = json!(level);
    }
    if !time.is_empty() {
        entry["timeQualifierCode"] = json!(time);
    }
    if let Some(percent) = amount.strip_prefix('%') {
        entry["benefitPercent"] = json!(percent);
    } else if !amount.is_empty() {
        entry["benefitAmount"] = json!(amount);
    }
    entry
}

fn eligibility_answer(member: &str, control: Value, request: &Value) -> HttpResponse {
    let id = format!("ec_{}", uuid_like(member));
    let meta = json!({ "applicationMode": "production", "outboundTraceId": "01K2QTG5GGN7SSM34JMHS7QBDZ",
                       "senderId": "STEDI", "traceId": "01K2QTG5GGN7SSM34JMHS7QBDZ" });
    let aaa = |code: &str, description: &str| {
        json!({
            "code": code, "description": description, "field": "AAA",
            "followupAction": "Please Correct and Resubmit", "location": "Loop 2100C"
        })
    };
    match member {
        "AAA75" => HttpResponse::Ok().json(json!({
            "id": id, "controlNumber": control, "meta": meta,
            "errors": [aaa("75", "Subscriber/Insured Not Found")],
            "subscriber": { "aaaErrors": [aaa("75", "Subscriber/Insured Not Found")] }
        })),
        "AAA44" => HttpResponse::BadRequest().json(json!({
            "id": id, "controlNumber": control, "meta": meta,
            "errors": [aaa("44", "Invalid/Missing Provider Name")]
        })),
        _ => {
            let active = member != "INACTIVE1";
            let mut benefits = vec![json!({
                "code": if active { "1" } else { "6" },
                "name": if active { "Active Coverage" } else { "Inactive" },
                "serviceTypeCodes": ["30"], "inPlanNetworkIndicatorCode": "W",
                "planCoverage": "CHOICE PLUS"
            })];
            if active {
                benefits.extend([
                    eb("C", "IND", "Y", "23", "1500"),
                    eb("C", "IND", "Y", "24", "400"),
                    eb("C", "IND", "Y", "29", "1100"),
                    eb("C", "FAM", "Y", "23", "3000"),
                    eb("C", "IND", "N", "23", "3000"),
                    eb("G", "IND", "Y", "23", "6850"),
                    eb("G", "IND", "Y", "24", "1294.84"),
                    eb("B", "IND", "Y", "27", "25"),
                    eb("A", "IND", "Y", "27", "%.2"),
                    eb("A", "IND", "N", "27", "%.4"),
                ]);
            }
            HttpResponse::Ok().json(json!({
                "id": id, "controlNumber": control, "meta": meta, "errors": [],
                "tradingPartnerServiceId": request["tradingPartnerServiceId"],
                "planDateInformation": if active {
                    json!({ "plan": "20260101-20261231" })
                } else {
                    json!({ "planBegin": "20250101", "planEnd": "20260630" })
                },
                "subscriber": request["subscriber"],
                "benefitsInformation": benefits
            }))
        }
    }
}

fn claim_status_answer(member: &str, control: Value, request: &Value) -> HttpResponse {
    let meta =
        json!({ "applicationMode": "production", "traceId": format!("cs_{}", uuid_like(member)) });
    let claim_number = request["encounter"]["tradingPartnerClaimNumber"].clone();
    let status = match member {
        "AAA75" => {
            return HttpResponse::Ok().json(json!({
                "controlNumber": control, "meta": meta,
                "errorResponse": { "errors": [{
                    "code": "75", "description": "Subscriber/Insured Not Found",
                    "followupAction": "Please Correct and Resubmit"
                }] }
            }))
        }
        "DENIED1" => json!({
            "amountPaid": "0", "checkIssueDate": "2026-10-14", "checkNumber": "EFT000211",
            "paidDate": "2026-10-09", "statusCategoryCode": "F2",
            "statusCategoryCodeValue": "Finalized/Denial - The claim/line has been denied.",
            "statusCode": "585", "submittedAmount": "1101", "tradingPartnerClaimNumber": claim_number
        }),
        "NOTFOUND1" => json!({
            "amountPaid": "0", "statusCategoryCode": "D0",
            "statusCategoryCodeValue": "Data Search Unsuccessful - The payer is unable to return status on the requested claim(s) based on the submitted search criteria.",
            "statusCode": "97", "submittedAmount": "0"
        }),
        _ => json!({
            "amountPaid": "108.77", "checkIssueDate": "2026-10-17", "checkNumber": "123456789",
            "paidDate": "2026-10-15", "statusCategoryCode": "F1",
            "statusCategoryCodeValue": "Finalized/Payment - The claim/line has been paid.",
            "statusCode": "65", "submittedAmount": "267.54", "tradingPartnerClaimNumber": "0123456789"
        }),
    };
    HttpResponse::Ok().json(json!({
        "controlNumber": control, "meta": meta,
        "tradingPartnerServiceId": request["tradingPartnerServiceId"],
        "providers": request["providers"], "subscriber": request["subscriber"],
        "claims": [{ "claimStatus": status }]
    }))
}

/// A stable id per member, so tests can expect the transaction id.
fn uuid_like(member: &str) -> String {
    let hex: String = member.bytes().map(|b| format!("{b:02x}")).collect();
    format!("{:0<32}", hex)[..32].to_owned()
}
