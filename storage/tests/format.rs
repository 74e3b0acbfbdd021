//! The on-disk JSON of the records, pinned: a stored record written by any earlier release must decode,
//! and re-encoding it must give back the same bytes. The fixtures cover every id, step key and failure
//! field, including a failure category and code this release does not know.

use switchboard_storage::{AttemptRecord, DeliveryRecord, RequestRecord};

/// A finished request with a follow-up step, a failed call with an unknown code, a call a platform holds
/// and an in-flight call.
const REQUEST: &str = r#"{"id":"0190f5e2-7c1a-7d3e-9f00-1a2b3c4d5e6f","account_id":"acme","environment":"production","batch_id":"5b0c8a4e-2f7d-4c1b-9a3e-6d5f4e3c2b1a","schema_id":"claim-status-basic","schema_version":3,"request_type":"claim_status","inputs":{"memberId":"W123456789","payerName":"Aetna"},"internal_id":"client-1","internal_tag":null,"webhook_url":"https://client.example/hook","ai_only":false,"onshore_only":true,"payer_lookup":{"input_payer_name":"Aetna","input_phone_number":null,"matched_payer_name":"Aetna","matched_payer_phone":"8005550100","phone_number_to_use":"8005550100","phone_number_source":"directory"},"dial":{"number":"8005550100","source":"directory"},"credential_id":"cred-1","payer_electronic":true,"electronic_payer_id":"60054","state":"PARTIAL","created_at":"2026-11-23T14:03:07.123456Z","due_date":"2026-11-24","due_at":"2026-11-24T05:00:00Z","completed_at":"2026-11-24T05:20:00Z","run":{"started_at":"2026-11-24T05:00:01Z","schema_version":3,"steps":[{"key":"step-1","schema_id":"claim-status-basic","schema_version":3,"name":"Claim status","state":"SUCCEEDED","triggered_by":null,"fields_required":2,"fields_captured":2,"missing_fields":[],"error":null},{"key":"step-2","schema_id":"claim-appeal-basic","schema_version":1,"name":"Appeal","state":"FAILED","triggered_by":"step-1","fields_required":1,"fields_captured":0,"missing_fields":["appealDeadline"],"error":{"category":"NOT_FOUND","code":"MEMBER_NOT_FOUND","message":"The payer could not find the member in its records."}}],"calls":[{"id":"0190f5e2-8000-7000-8000-000000000001","seq":1,"step_key":"step-1","attempt":1,"to":"8005550100","number_source":"directory","placed_at":"2026-11-24T05:00:02Z","outcome":{"ended_at":"2026-11-24T05:04:02Z","disposition":"failed","duration_seconds":240,"captured":{},"transcript":null,"transcript_post_call":"Agent notes.","summary":"Failed.","audit_summary":null,"recording":false,"from_number":"+18885550199","failure":{"category":"SYSTEM_ERROR","code":"A_CODE_FROM_THE_FUTURE","message":"Something new."},"referral_number":null,"follow_up_requested":false},"platform":null},{"id":"0190f5e2-8000-7000-8000-000000000002","seq":2,"step_key":"step-1","attempt":2,"to":"8005550111","number_source":"referral","placed_at":"2026-11-24T05:05:00Z","outcome":{"ended_at":"2026-11-24T05:10:00Z","disposition":"completed","duration_seconds":300,"captured":{"claimStatus":"DENIED"},"transcript":"Representative: Hello.","transcript_post_call":null,"summary":"Claim denied.","audit_summary":"No PHI disclosed.","recording":true,"from_number":null,"failure":null,"referral_number":null,"follow_up_requested":true},"platform":{"platform":"retell","requested_at":"2026-11-24T05:05:00Z","platform_call_id":"call_abc","events":["call_started","call_analyzed"],"result":{"end":"conversation"},"recording_file":"0190f5e2-8000-7000-8000-000000000002.wav"}},{"id":"0190f5e2-8000-7000-8000-000000000003","seq":3,"step_key":"step-2","attempt":1,"to":"8005550111","number_source":"input","placed_at":"2026-11-24T05:11:00Z","outcome":null,"platform":null}],"electronic":{"at":"2026-11-24T05:00:01Z","captured":{"planActive":"true"},"channel":"stedi","transaction_id":"123456789","sources":{"planActive":"EB 1 IND"},"outcome":"answered"},"results":{"claimStatus":"DENIED"},"result_sources":{"claimStatus":2},"missing_fields":["appealDeadline"],"modality":"digital_plus_phone","error":{"category":"A_CATEGORY_FROM_THE_FUTURE","code":"OTHER","message":"The request could not be completed"},"result_summary":null,"restarts":["2026-11-24T05:06:00Z"],"faults":1}}"#;

const DELIVERY: &str = r#"{"request_id":"0190f5e2-7c1a-7d3e-9f00-1a2b3c4d5e6f","url":"https://client.example/hook","signing_secret":"whsec","payload":"{\"requestId\":\"0190f5e2-7c1a-7d3e-9f00-1a2b3c4d5e6f\"}","terminal_at":"2026-11-24T05:20:00Z","next_round":1,"next_at":"2026-11-24T05:21:00Z","status":"pending","attempts":3}"#;

const ATTEMPT: &str = r#"{"request_id":"0190f5e2-7c1a-7d3e-9f00-1a2b3c4d5e6f","url":"https://client.example/hook","at":"2026-11-24T05:20:00Z","round":0,"attempt":1,"status_code":503,"error":null,"latency_ms":12}"#;

/// Decodes `json` as `R` and encodes it again.
fn reencoded<R: serde::Serialize + serde::de::DeserializeOwned>(json: &str) -> String {
    let record: R = serde_json::from_str(json).expect("the stored JSON decodes");
    serde_json::to_string(&record).unwrap()
}

#[test]
fn a_stored_request_reencodes_to_the_same_bytes() {
    assert_eq!(reencoded::<RequestRecord>(REQUEST), REQUEST);
}

#[test]
fn a_stored_delivery_and_its_attempt_reencode_to_the_same_bytes() {
    assert_eq!(reencoded::<DeliveryRecord>(DELIVERY), DELIVERY);
    assert_eq!(reencoded::<AttemptRecord>(ATTEMPT), ATTEMPT);
}
