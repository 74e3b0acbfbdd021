//! What the PHI tests send: marked values that pass validation, the creates and sign-ins that fail on a
//! marked value, and every read of what was created.

use reqwest::Method;
use serde_json::{json, Value};

use crate::helpers::Api;
use crate::helpers::{ADMIN_TOKEN, LIVE_KEY};

/// A run-unique token of letters no validation rule objects to (none can spell `TEST`, `NULL` or `ABCD`),
/// and values built around it.
pub struct Marker {
    pub token: String,
}

impl Marker {
    pub fn new() -> Marker {
        const LETTERS: &[u8] = b"fghjkmpqrvwxyz";
        let mut seed = uuid::Uuid::new_v4().as_u128();
        let random: String = (0..12)
            .map(|_| {
                let letter = LETTERS[(seed % LETTERS.len() as u128) as usize];
                seed /= LETTERS.len() as u128;
                letter as char
            })
            .collect();
        Marker {
            token: format!("phimark{random}"),
        }
    }

    /// A person's name: letters only.
    pub fn name(&self) -> String {
        let mut name = self.token.clone();
        name[..1].make_ascii_uppercase();
        name
    }

    /// A member id: uppercase letters.
    pub fn upper(&self) -> String {
        self.token.to_ascii_uppercase()
    }

    /// Whether `text` holds the marker in any case.
    pub fn is_in(&self, text: &str) -> bool {
        text.to_ascii_lowercase().contains(&self.token)
    }

    /// One create item, with a marked `internalId` (unique per `tag`) and `internalTag`.
    pub fn item(&self, schema: &str, inputs: Value, tag: &str, webhook_url: &str) -> Value {
        json!({
            "schemaId": schema,
            "inputs": inputs,
            "internalId": format!("{}-{tag}", self.token),
            "internalTag": format!("claim {} record", self.token),
            "webhookUrl": webhook_url,
        })
    }
}

/// `claim-status-basic` inputs (a superset of the other demo schemas' required inputs) for `payer`, with
/// every free-text value marked.
pub fn claim_inputs(marker: &Marker, payer: &str) -> Value {
    json!({
        "payerName": payer,
        "phoneNumber": "8005550142",
        "memberId": marker.upper(),
        "groupNumber": format!("G-{}", marker.upper()),
        "patientFirstName": marker.name(),
        "patientLastName": format!("{}-Lee", marker.name()),
        "memberFirstName": marker.name(),
        "patientDateOfBirth": "1961-07-19",
        "dateOfService": "2026-10-01",
        "billingProviderNpi": "1234567890",
        "billingProviderTaxId": "12-3456789",
        "claimNumber": format!("CLM-{}", marker.upper()),
        "claimChargeAmount": "318.27",
        "patientNotes": format!("the patient {} prefers mornings", marker.token),
    })
}

/// One production request per demo schema and payer route: electronic first (UnitedHealthcare, Aetna), a
/// payer typed by the client that the directory does not know, and a prior authorization.
pub fn production_inputs(marker: &Marker) -> Vec<(&'static str, Value)> {
    let mut vob = claim_inputs(marker, "Aetna");
    vob["serviceType"] = json!(format!("therapy for {}", marker.token));
    let mut unknown_payer = claim_inputs(marker, &format!("{} Health Plan", marker.name()));
    unknown_payer["phoneNumber"] = json!("8005550199");
    let mut prior_auth = claim_inputs(marker, "Aetna");
    prior_auth["cptCode"] = json!("97110");
    prior_auth["priorAuthId"] = json!(format!("PA-{}", marker.upper()));
    vec![
        ("claim-status-basic", claim_inputs(marker, "UHC")),
        ("vob-basic", vob),
        ("claim-status-basic", unknown_payer),
        ("prior-auth-status", prior_auth),
    ]
}

/// Creates, lookups, list queries and sign-ins that fail on a marked value: each answers with its error.
pub async fn refuse_marked_values(api: &Api, live: &str, marker: &Marker) {
    let valid = claim_inputs(marker, "UHC");
    let with = |key: &str, value: String| {
        let mut inputs = valid.clone();
        inputs[key] = json!(value);
        json!({ "schemaId": "claim-status-basic", "inputs": inputs, "internalId": marker.token })
    };
    let refused = [
        (with("memberId", format!("{}NULL", marker.upper())), 400),
        (with("patientFirstName", format!("{}7", marker.name())), 400),
        (with("patientDateOfBirth", marker.token.clone()), 400),
        (
            with("dateOfService", format!("{}-01-01", marker.token)),
            400,
        ),
        (
            json!({ "schemaId": "vob-basic", "inputs": marker.token }),
            400,
        ),
        (json!({ "schemaId": marker.token, "inputs": valid }), 404),
        (
            json!({ "requests": [{ "inputs": valid, "internalTag": marker.token }] }),
            400,
        ),
    ];
    for (body, expected) in refused {
        let (status, answer) = api.post_requests(live, &body).await;
        assert_eq!(status, expected, "{body} -> {answer}");
    }
    let truncated = format!(
        r#"{{"schemaId": "vob-basic", "inputs": {{"memberId": "{}"#,
        marker.token
    );
    let (status, answer) = api.raw_post(live, "/v1/requests", truncated).await;
    assert_eq!(status, 400, "a truncated body: {answer}");
    let lookup = json!({ "payerName": marker.name(), "memberId": marker.upper() });
    let path = "/v1/schemas/claim-status-basic/required-payer-inputs";
    let (status, answer) = api.send(Method::POST, path, live, Some(&lookup)).await;
    assert!(status < 500, "payer lookup: {status} {answer}");
    for query in ["dateFrom", "pageSize", "pageToken", "requestBatchId"] {
        let path = format!("/v1/requests?{query}={}", marker.token);
        let (status, answer) = api.send(Method::GET, &path, live, None).await;
        assert!(status < 500, "{path}: {answer}");
    }
    let (status, _) = api.auth(&marker.token, &marker.token).await;
    assert_eq!(status, 401, "a marked API key is refused");
    let (status, _) = api.auth(LIVE_KEY, &marker.token).await;
    assert_eq!(status, 401, "a marked API secret is refused");
    let (status, _) = api
        .send(Method::GET, "/v1/schemas", &marker.token, None)
        .await;
    assert_eq!(status, 401, "a marked bearer token is refused");
}

/// Every route with an id in its path, called with the marker as that id: reads, changes, and bodies that
/// fail to parse (actix-web's own diagnostics of those quote the request's path), by a client and by an
/// operator. Each is refused or finds nothing; none may write the id to the log, at any level.
pub async fn probe_marked_paths(api: &Api, live: &str, marker: &Marker) {
    let id = &marker.token;
    let client_reads = [
        format!("/v1/requests/{id}"),
        format!("/v1/schemas/{id}"),
        format!("/v1/schemas/{id}/required-inputs"),
        format!("/console/api/requests/{id}"),
        format!("/console/api/requests/{id}/voice"),
        format!("/v1/recordings/{id}?expires=1&signature={id}"),
        format!("/v1/{id}"),
    ];
    for path in client_reads {
        let (status, _) = api.text(&path, live).await;
        assert!((400..500).contains(&status), "{path}: {status}");
    }
    let admin_calls = [
        (Method::GET, format!("/admin/v1/accounts/{id}")),
        (Method::DELETE, format!("/admin/v1/accounts/{id}")),
        (Method::GET, format!("/admin/v1/schemas/{id}")),
        (Method::DELETE, format!("/admin/v1/schemas/{id}")),
        (Method::DELETE, format!("/admin/v1/requests/{id}")),
        (Method::DELETE, format!("/admin/v1/operators/{id}")),
        (
            Method::POST,
            format!("/admin/v1/webhook-deliveries/{id}/redeliver"),
        ),
        (
            Method::GET,
            format!("/admin/v1/webhook-deliveries?requestId={id}"),
        ),
    ];
    for (method, path) in admin_calls {
        let (status, answer) = api.send(method, &path, ADMIN_TOKEN, None).await;
        assert!(status < 500, "{path}: {status} {answer}");
    }
    // Bodies that are not JSON, on paths that carry the id.
    let truncated = format!(r#"{{"name": "{id}"#);
    let bodies = [
        (
            Method::POST,
            format!("/v1/schemas/{id}/required-payer-inputs"),
            live,
        ),
        (Method::PUT, format!("/admin/v1/accounts/{id}"), ADMIN_TOKEN),
        (
            Method::PATCH,
            format!("/admin/v1/accounts/{id}"),
            ADMIN_TOKEN,
        ),
        (Method::PUT, format!("/admin/v1/schemas/{id}"), ADMIN_TOKEN),
        (Method::PUT, format!("/admin/v1/payers/{id}"), ADMIN_TOKEN),
        (
            Method::POST,
            format!("/admin/v1/accounts/{id}/credentials"),
            ADMIN_TOKEN,
        ),
        (
            Method::POST,
            format!("/agent/v1/calls/{id}/outcome"),
            ADMIN_TOKEN,
        ),
        (Method::POST, format!("/dialers/{id}/events"), ADMIN_TOKEN),
    ];
    for (method, path, token) in bodies {
        let response = api
            .client
            .request(method, api.url(&path))
            .bearer_auth(token)
            .header("Content-Type", "application/json")
            .body(truncated.clone())
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        assert!((400..500).contains(&status), "{path}: {status}");
    }
}

/// Reads one terminal request every way a client and an operator can: the single read (already done), the
/// console's detail and voice views, the webhook delivery log and the recording. Returns the signature
/// of its recording link, a credential too.
pub async fn read_everything_about(
    api: &Api,
    token: &str,
    read: &Value,
    marker: &Marker,
) -> Option<String> {
    let id = read["requestId"].as_str().unwrap();
    assert!(
        marker.is_in(&read.to_string()),
        "the read carries the marked values back: {read}"
    );
    for path in [
        format!("/console/api/requests/{id}"),
        format!("/console/api/requests/{id}/voice"),
    ] {
        let (status, body) = api.send(Method::GET, &path, token, None).await;
        assert!(status == 200 || status == 404, "{path}: {body}");
    }
    let path = format!("/admin/v1/webhook-deliveries?requestId={id}");
    let (status, body) = api.send(Method::GET, &path, ADMIN_TOKEN, None).await;
    assert_eq!(status, 200, "{body}");
    let url = read["recordingDownloadUrl"].as_str()?;
    let path_and_query = &url[url.find("/v1/recordings/").expect("a recording link")..];
    let (status, _) = api.text(path_and_query, token).await;
    assert_eq!(status, 200, "the recording downloads");
    url.split("signature=").nth(1).map(str::to_ascii_lowercase)
}

/// The list reads: each request's batch, today's window, and the console's listing filtered by a marked
/// `internalId`.
pub async fn read_lists(api: &Api, tokens: &[&str], reads: &[(&str, Value)], marker: &Marker) {
    for (token, read) in reads {
        let batch = read["requestBatchId"].as_str().unwrap();
        let path = format!("/v1/requests?requestBatchId={batch}");
        let (status, body) = api.send(Method::GET, &path, token, None).await;
        assert_eq!(status, 200, "{body}");
    }
    for token in tokens {
        let (status, body) = api.send(Method::GET, "/v1/requests", token, None).await;
        assert_eq!(status, 200, "{body}");
        assert!(!body["requests"].as_array().unwrap().is_empty(), "{body}");
        let path = format!("/console/api/requests?internalId={}", marker.token);
        let (status, body) = api.send(Method::GET, &path, token, None).await;
        assert_eq!(status, 200, "{body}");
    }
}
