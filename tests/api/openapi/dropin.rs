//! A client written against the hosted service's published document works against Switchboard unchanged
//! once `server.auth_header_word` and `server.lookup_source_word` carry the hosted words. The client here
//! is the raw HTTP a generator would produce from `hosted.json` (a document in the hosted one's shape):
//! it finds each operation by its id, sends the headers the document names, and deserializes every answer
//! with the document's schemas.

use reqwest::Method;
use serde_json::{json, Value};

use super::fetch_document;
use crate::helpers::{spawn_app_with, TestApp, TestConfig, LIVE_KEY, LIVE_SECRET};

const HOSTED: &str = include_str!("hosted.json");

struct HostedClient<'a> {
    app: &'a TestApp,
    document: Value,
    token: Option<String>,
}

impl HostedClient<'_> {
    /// The operation's path and method, from the hosted document.
    fn find(&self, id: &str) -> (String, Method) {
        for (path, item) in self.document["paths"].as_object().unwrap() {
            for (method, operation) in item.as_object().unwrap() {
                if operation["operationId"] == id {
                    return (
                        path.clone(),
                        Method::from_bytes(method.to_uppercase().as_bytes()).unwrap(),
                    );
                }
            }
        }
        panic!("the hosted document has no {id}");
    }

    fn header_name(&self, scheme: &str) -> String {
        self.document["components"]["securitySchemes"][scheme]["name"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// Calls an operation as a generated client does and parses the answer with the hosted schema of its
    /// status. Returns the status and the body.
    async fn call(
        &self,
        id: &str,
        params: &[(&str, &str)],
        query: &[(&str, &str)],
        body: Option<Value>,
    ) -> (u16, Value) {
        let (template, method) = self.find(id);
        let path = params.iter().fold(template, |path, (name, value)| {
            path.replace(&format!("{{{name}}}"), value)
        });
        let mut request = self
            .app
            .client
            .request(method, self.app.url(&path))
            .query(query)
            .header("Accept", "application/json")
            .header("User-Agent", "OpenAPI-Generator/1.0.0/python");
        request = match &self.token {
            Some(token) => request.bearer_auth(token),
            None => request
                .header(self.header_name("apiKey"), LIVE_KEY)
                .header(self.header_name("apiSecret"), LIVE_SECRET),
        };
        if let Some(body) = body {
            request = request
                .header("Content-Type", "application/json")
                .body(body.to_string());
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let body: Value = response.json().await.unwrap();
        self.deserialize(id, status, &body);
        (status, body)
    }

    /// What the generated client's deserializer does: the answer must fit the documented schema.
    fn deserialize(&self, id: &str, status: u16, body: &Value) {
        let (path, method) = self.find(id);
        let response = &self.document["paths"][&path][method.as_str().to_lowercase()]["responses"]
            [status.to_string()];
        let reference = response["$ref"].as_str().unwrap_or_else(|| {
            panic!("{id} answered {status}, which the hosted document does not declare: {body}")
        });
        let response = self
            .document
            .pointer(reference.trim_start_matches('#'))
            .unwrap();
        let mut schema = response["content"]["application/json"]["schema"].clone();
        schema["components"] = self.document["components"].clone();
        let validator = jsonschema::draft202012::new(&schema).unwrap();
        let problems: Vec<String> = validator.iter_errors(body).map(|e| e.to_string()).collect();
        assert!(problems.is_empty(), "{id} {status}: {problems:?}\n{body:#}");
    }
}

/// A value for each input key the flow fills in.
fn value_for(key: &str, n: usize) -> Value {
    json!(match key {
        "payerName" => "UnitedHealthcare".to_owned(),
        "memberId" => format!("W{:09}", 200_000_000 + n),
        "patientFirstName" => "Jane".to_owned(),
        "patientLastName" => "Doe".to_owned(),
        "patientDateOfBirth" => "1980-04-12".to_owned(),
        "dateOfService" => "2026-10-01".to_owned(),
        "billingProviderNpi" => "1234567893".to_owned(),
        "billingProviderTaxId" => "12-3456789".to_owned(),
        "groupNumber" => "GRP20417".to_owned(),
        "memberDateOfBirth" => "1980-04-12".to_owned(),
        other => panic!("the flow has no value for required input {other}"),
    })
}

#[actix_web::test]
async fn a_client_of_the_hosted_document_runs_the_whole_flow_unchanged() {
    let mut config = TestConfig::default();
    config
        .set("server.auth_header_word", "Robodialer")
        .set("server.lookup_source_word", "superdial");
    let app = spawn_app_with(&config).await;
    let hosted: Value = serde_json::from_str(HOSTED).unwrap();

    // The served document names what the hosted one names.
    let served = fetch_document(&app).await;
    for scheme in ["apiKey", "apiSecret"] {
        assert_eq!(
            served["components"]["securitySchemes"][scheme]["name"],
            hosted["components"]["securitySchemes"][scheme]["name"]
        );
    }
    assert_eq!(
        served["components"]["schemas"]["PayerLookupOut"]["properties"]["phoneNumberSource"]
            ["enum"],
        hosted["components"]["schemas"]["PayerLookup"]["properties"]["phoneNumberSource"]["enum"]
    );

    let mut client = HostedClient {
        app: &app,
        document: hosted,
        token: None,
    };
    let (status, auth) = client.call("getToken", &[], &[], None).await;
    assert_eq!(status, 200, "{auth}");
    client.token = Some(auth["token"].as_str().unwrap().to_owned());

    let (_, schemas) = client.call("listSchemas", &[], &[], None).await;
    assert!(schemas["schemas"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["schemaId"] == "claim-status-basic"));
    let schema = [("schemaId", "claim-status-basic")];
    let (_, inputs) = client.call("getRequiredInputs", &schema, &[], None).await;
    let payers = json!({ "payerNames": ["UnitedHealthcare"] });
    let (_, payer_inputs) = client
        .call("getRequiredPayerInputs", &schema, &[], Some(payers))
        .await;
    let mut required: Vec<String> = inputs["requiredInputs"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .chain(
            payer_inputs["payers"][0]["payerRequiredInputs"]["fields"]
                .as_array()
                .unwrap(),
        )
        .map(|f| f.as_str().unwrap().to_owned())
        .collect();
    required.sort();
    required.dedup();
    assert!(
        required.iter().any(|key| key == "groupNumber"),
        "the payer adds its inputs: {required:?}"
    );
    let item = |n: usize, internal_id: &str| {
        let inputs: serde_json::Map<String, Value> = required
            .iter()
            .map(|key| (key.clone(), value_for(key, n)))
            .collect();
        json!({ "schemaId": "claim-status-basic", "inputs": inputs, "internalId": internal_id,
                "useMatchedPayerPhone": false, "aiOnly": false, "onshoreOnly": false })
    };

    let (status, single) = client
        .call("createRequests", &[], &[], Some(item(1, "dropin-1")))
        .await;
    assert_eq!(status, 200, "{single}");
    assert_eq!(single["payerLookup"]["phoneNumberSource"], "superdial");
    let batch = json!({ "requests": [item(2, "dropin-2"), item(3, "dropin-3")] });
    let (status, created) = client.call("createRequests", &[], &[], Some(batch)).await;
    assert_eq!(status, 200, "{created}");

    let id = single["requestId"].as_str().unwrap();
    let (_, read) = client
        .call("getRequest", &[("requestId", id)], &[], None)
        .await;
    assert_eq!(read["internalId"], "dropin-1");
    assert_eq!(read["payerLookup"]["phoneNumberSource"], "superdial");
    let day = [
        ("dateFrom", "2026-11-23"),
        ("dateTo", "2026-11-24"),
        ("pageSize", "100"),
    ];
    let (_, listed) = client.call("listRequests", &[], &day, None).await;
    assert_eq!(listed["requests"].as_array().unwrap().len(), 3, "{listed}");
    let batch_id = created["requests"][0]["requestBatchId"].as_str().unwrap();
    let (_, by_batch) = client
        .call("listRequests", &[], &[("requestBatchId", batch_id)], None)
        .await;
    assert!(!by_batch["requests"].as_array().unwrap().is_empty());

    // A replay of an internalId answers the original request and creates nothing.
    let (status, replay) = client
        .call("createRequests", &[], &[], Some(item(9, "dropin-1")))
        .await;
    assert_eq!((status, &replay["requestId"]), (200, &single["requestId"]));
    let (_, listed) = client.call("listRequests", &[], &day, None).await;
    assert_eq!(listed["requests"].as_array().unwrap().len(), 3);

    // A wrong secret is the hosted document's 401.
    client.token = None;
    let bad = app
        .client
        .get(app.url("/v1/auth"))
        .header("Robodialer-API-Key", LIVE_KEY)
        .header("Robodialer-API-Secret", "wrong")
        .send()
        .await
        .unwrap();
    let (status, body) = (bad.status().as_u16(), bad.json::<Value>().await.unwrap());
    client.deserialize("getToken", status, &body);
    assert_eq!((status, &body["error"]), (401, &json!("UNAUTHORIZED")));
}
