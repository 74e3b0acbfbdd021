//! `switchboard trace <requestId>`: the call-flow tree of one request in the terminal.
//!
//! It reads the request through the client API (`GET /v1/requests/{id}`), so it works against any
//! Switchboard a client can reach, and renders steps, the calls of each step in placement order, and every
//! result field with the call, step and schema behind it (service-interface 2.6, rule 5).

use std::fmt::Write;

use anyhow::{bail, Context};
use serde_json::Value;

/// Where and as whom to read the request.
#[derive(Debug, Clone)]
pub struct TraceTarget {
    /// Base URL, e.g. `http://127.0.0.1:8080`.
    pub base_url: String,
    /// A bearer token; exchanged from key and secret when absent.
    pub token: Option<String>,
    /// API key.
    pub key: Option<String>,
    /// API secret.
    pub secret: Option<String>,
    /// The word of the credential headers (the server's `auth_header_word`).
    pub product_word: String,
}

/// Fetches the request and renders its tree.
pub async fn trace(target: &TraceTarget, request_id: &str) -> anyhow::Result<String> {
    let client = reqwest::Client::new();
    let base = target.base_url.trim_end_matches('/');
    let token = match (&target.token, &target.key, &target.secret) {
        (Some(token), _, _) => token.clone(),
        (None, Some(key), Some(secret)) => {
            let response = client
                .get(format!("{base}/v1/auth"))
                .header(format!("{}-API-Key", target.product_word), key)
                .header(format!("{}-API-Secret", target.product_word), secret)
                .send()
                .await
                .with_context(|| format!("cannot reach {base}"))?;
            let status = response.status();
            let body: Value = response
                .json()
                .await
                .context("the auth answer is not JSON")?;
            if !status.is_success() {
                bail!("authentication failed ({status}): {body}");
            }
            body["token"]
                .as_str()
                .context("the auth answer has no token")?
                .to_owned()
        }
        _ => {
            bail!("give a token (--token / SWITCHBOARD_TOKEN) or a key and secret (--key/--secret)")
        }
    };
    let response = client
        .get(format!("{base}/v1/requests/{request_id}"))
        .bearer_auth(token)
        .send()
        .await
        .with_context(|| format!("cannot reach {base}"))?;
    let status = response.status();
    let body: Value = response
        .json()
        .await
        .context("the request answer is not JSON")?;
    if !status.is_success() {
        bail!("cannot read request {request_id} ({status}): {body}");
    }
    Ok(render(&body))
}

/// The tree of one request read (`RequestResponse` JSON).
pub fn render(request: &Value) -> String {
    let text = |v: &Value| {
        v.as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| v.to_string())
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Request {}  {}  ({} · {})",
        text(&request["requestId"]),
        text(&request["state"]),
        text(&request["schemaId"]),
        text(&request["requestType"]),
    );
    let _ = writeln!(
        out,
        "  batch {}  created {}  due {}  completed {}  modality {}",
        text(&request["requestBatchId"]),
        text(&request["dateCreated"]),
        text(&request["dueDate"]),
        text(&request["completedAt"]),
        text(&request["modality"]),
    );
    if let Some(lookup) = request.get("payerLookup").filter(|v| v.is_object()) {
        let _ = writeln!(
            out,
            "  payer lookup: {:?} -> {} via {}",
            text(&lookup["inputPayerName"]),
            text(&lookup["phoneNumberToUse"]),
            text(&lookup["phoneNumberSource"]),
        );
    }
    if let Some(error) = request.get("error").filter(|v| v.is_object()) {
        let _ = writeln!(
            out,
            "  error: {}/{}: {}",
            text(&error["errorCategory"]),
            text(&error["errorCode"]),
            text(&error["errorMessage"]),
        );
    }
    let empty = Vec::new();
    let steps = request["callSteps"].as_array().unwrap_or(&empty);
    let calls = request["contributingCalls"].as_array().unwrap_or(&empty);
    for (index, step) in steps.iter().enumerate() {
        let last_step = index + 1 == steps.len();
        let (branch, stem) = if last_step {
            ("└─", "   ")
        } else {
            ("├─", "│  ")
        };
        let key = text(&step["key"]);
        let trigger = step["triggeredBy"]
            .as_str()
            .map(|t| format!("  triggered by {t}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{branch} {key} {} [{}] {}/{} required  {} call(s){trigger}",
            text(&step["name"]),
            text(&step["state"]),
            step["fieldsCaptured"],
            step["fieldsRequired"],
            step["numContributingCalls"],
        );
        let _ = writeln!(out, "{stem}   schema {}", text(&step["schemaId"]));
        if let Some(missing) = names(&step["missingFields"]) {
            let _ = writeln!(out, "{stem}   missing {missing}");
        }
        let in_step: Vec<&Value> = calls
            .iter()
            .filter(|c| c["callStep"] == step["key"])
            .collect();
        for (position, call) in in_step.iter().enumerate() {
            let call_branch = if position + 1 == in_step.len() {
                "└─"
            } else {
                "├─"
            };
            let to = call
                .get("to")
                .map(|t| format!(" to {}", text(t)))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "{stem}   {call_branch} call {}{to}  {}  {}",
                call["call"],
                text(&call["callDuration"]),
                call["callSummary"].as_str().unwrap_or_default(),
            );
            if let Some(captured) = names(&call["fieldsCaptured"]) {
                let _ = writeln!(out, "{stem}        captured {captured}");
            }
        }
    }
    if let Some(results) = request["results"].as_object().filter(|r| !r.is_empty()) {
        let _ = writeln!(out, "results");
        let sources = &request["resultSources"];
        for (field, value) in results {
            let origin = match sources.get(field).and_then(Value::as_u64) {
                Some(call) => {
                    let step_key = calls
                        .iter()
                        .find(|c| c["call"].as_u64() == Some(call))
                        .map(|c| text(&c["callStep"]))
                        .unwrap_or_default();
                    let schema = steps
                        .iter()
                        .find(|s| text(&s["key"]) == step_key)
                        .map(|s| text(&s["schemaId"]))
                        .unwrap_or_default();
                    format!("call {call} · {step_key} · {schema}")
                }
                None => "no phone-call source".to_owned(),
            };
            let _ = writeln!(out, "  {field} = {}   <- {origin}", text(value));
        }
    }
    if let Some(missing) = names(&request["missingFields"]) {
        let _ = writeln!(out, "missing {missing}");
    }
    out
}

/// A non-empty JSON array of names, comma-separated.
fn names(list: &Value) -> Option<String> {
    let items = list.as_array().filter(|items| !items.is_empty())?;
    let names: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
    Some(names.join(", "))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::render;

    #[test]
    fn the_tree_shows_steps_calls_and_where_each_answer_came_from() {
        let request = json!({
            "requestId": "r1", "state": "SUCCESS", "schemaId": "claim-status-basic", "requestType": "claim-status",
            "requestBatchId": "b1", "dateCreated": "2026-11-23T14:00:00.000000+00:00", "dueDate": "d", "completedAt": "c",
            "modality": "phone_only",
            "callSteps": [
                { "key": "step-1", "schemaId": "claim-status-basic", "name": "Claim status", "state": "SUCCESS",
                  "fieldsRequired": 2, "fieldsCaptured": 2, "missingFields": [], "numContributingCalls": 2, "triggeredBy": null },
                { "key": "step-2", "schemaId": "claim-appeal-basic", "name": "Appeal", "state": "SUCCESS",
                  "fieldsRequired": 1, "fieldsCaptured": 1, "missingFields": [], "numContributingCalls": 1, "triggeredBy": "step-1" }
            ],
            "contributingCalls": [
                { "call": 1, "callStep": "step-1", "callDuration": "00:01:00", "fieldsCaptured": [] },
                { "call": 2, "callStep": "step-1", "callDuration": "00:05:00", "callSummary": "Claim denied.", "fieldsCaptured": ["claimStatus"] },
                { "call": 3, "callStep": "step-2", "to": "+18885550111", "callDuration": "00:04:00", "fieldsCaptured": ["appealDeadline"] }
            ],
            "results": { "claimStatus": "DENIED", "appealDeadline": "2027-01-01" },
            "resultSources": { "claimStatus": 2, "appealDeadline": 3 },
            "missingFields": []
        });
        let tree = render(&request);
        assert!(
            tree.contains("├─ step-1 Claim status [SUCCESS] 2/2 required  2 call(s)"),
            "{tree}"
        );
        assert!(
            tree.contains(
                "└─ step-2 Appeal [SUCCESS] 1/1 required  1 call(s)  triggered by step-1"
            ),
            "{tree}"
        );
        assert!(tree.contains("call 2  00:05:00  Claim denied."), "{tree}");
        assert!(tree.contains("call 3 to +18885550111"), "{tree}");
        assert!(
            tree.contains("claimStatus = DENIED   <- call 2 · step-1 · claim-status-basic"),
            "{tree}"
        );
        assert!(
            tree.contains("appealDeadline = 2027-01-01   <- call 3 · step-2 · claim-appeal-basic"),
            "{tree}"
        );
    }
}
