//! Unit tests of the pure parts: the create body and its structured-data schema, and the translation of
//! Vapi's documented `endedReason` values and call records into the driver's terms.

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::Utc;
use serde_json::json;
use switchboard_storage::{CallId, FieldRecord, FieldType, SchemaDefinition, SchemaVersionRecord};

use super::client::create_body;
use super::mapping::{call_state, end_of};
use super::types::{Analysis, Artifact, Call};
use super::VapiConfig;
use crate::dialer::platform::extraction::{extraction_fields, prompt_variables};
use crate::dialer::platform::{CallEnd, CallResult, PlatformCallRequest, PlatformCallState};
use crate::dialer::CallJob;

fn field(name: &str, field_type: FieldType, allowed: Option<&[&str]>) -> FieldRecord {
    FieldRecord {
        name: name.to_owned(),
        label: name.to_owned(),
        description: format!("What is the {name}?"),
        field_type,
        allowed_values: allowed.map(|a| a.iter().map(|s| (*s).to_owned()).collect()),
        required: true,
        when: None,
    }
}

fn request() -> PlatformCallRequest {
    let schema = Arc::new(SchemaVersionRecord {
        id: "vob".to_owned(),
        version: 2,
        published_at: Utc::now(),
        definition: SchemaDefinition {
            name: None,
            request_type: "vob".to_owned(),
            required_inputs: vec!["memberId".to_owned()],
            optional_inputs: vec![],
            follow_up: None,
            fields: vec![
                field(
                    "planStatus",
                    FieldType::Multiple,
                    Some(&["ACTIVE", "INACTIVE"]),
                ),
                field("inNetwork", FieldType::Boolean, None),
                field("deductible", FieldType::Dollar, None),
                field("effectiveDate", FieldType::Date, None),
            ],
            electronic: Default::default(),
        },
    });
    let inputs = BTreeMap::from([
        ("memberId".to_owned(), "W123".to_owned()),
        ("payerName".to_owned(), "Aetna".to_owned()),
    ]);
    PlatformCallRequest {
        extraction: extraction_fields(&schema),
        variables: prompt_variables(&schema, &inputs, &BTreeMap::new()),
        job: CallJob {
            call_id: "call-1".to_owned().into(),
            request_id: "req-1".to_owned().into(),
            seq: 1,
            attempt: 2,
            step_key: "primary".to_owned().into(),
            step_index: 0,
            schema,
            inputs,
            number: "8005550100".to_owned(),
            placed_at: Utc::now(),
            payer_zone: chrono_tz::Tz::UTC,
            payer_notes: String::new(),
            known: BTreeMap::new(),
            restarts: 0,
            seed: 7,
            time_scale: 60.0,
            ai_only: false,
            onshore_only: false,
        },
    }
}

fn config() -> VapiConfig {
    VapiConfig {
        api_key: "key".to_owned(),
        base_url: "https://api.vapi.ai".to_owned(),
        assistant_id: "asst".to_owned(),
        phone_number_id: "pn".to_owned(),
        server_secret: "s3cret".to_owned(),
        server_url: "https://sb.example/dialers/vapi/events".to_owned(),
    }
}

#[test]
fn names_stay_within_vapi_s_forty_characters() {
    let mut request = request();
    request.job.call_id = CallId::new();
    request.job.inputs.insert(
        "payerName".to_owned(),
        "Anthem Blue Cross and Blue Shield of California".to_owned(),
    );
    let body = serde_json::to_value(create_body(&config(), &request)).unwrap();
    let name = body["name"].as_str().unwrap();
    assert_eq!(name, format!("sb {}", request.job.call_id));
    assert!(name.chars().count() <= 40, "{name}");
    assert_eq!(
        body["customer"]["name"],
        "Anthem Blue Cross and Blue Shield of Cal"
    );
}

#[test]
fn the_create_body_has_vapi_s_shape() {
    let body = serde_json::to_value(create_body(&config(), &request())).unwrap();
    assert_eq!(body["assistantId"], "asst");
    assert_eq!(body["phoneNumberId"], "pn");
    assert_eq!(body["customer"]["number"], "+18005550100");
    let overrides = &body["assistantOverrides"];
    assert_eq!(overrides["variableValues"]["memberId"], "W123");
    assert_eq!(overrides["variableValues"]["requestType"], "vob");
    assert!(overrides["variableValues"]["questions"]
        .as_str()
        .unwrap()
        .contains("planStatus"));
    assert_eq!(
        overrides["server"],
        json!({"url": "https://sb.example/dialers/vapi/events", "headers": {"x-vapi-secret": "s3cret"}})
    );
    assert_eq!(
        overrides["serverMessages"],
        json!(["status-update", "end-of-call-report"])
    );
    assert_eq!(
        overrides["metadata"],
        json!({"switchboard_call_id": "call-1", "switchboard_request_id": "req-1", "switchboard_attempt": 2})
    );
    let plan = &overrides["analysisPlan"]["structuredDataPlan"];
    assert_eq!(plan["enabled"], true);
    let schema = &plan["schema"];
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["callOutcome"]));
    let properties = schema["properties"].as_object().unwrap();
    let names: Vec<&str> = properties.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "callOutcome",
            "deductible",
            "effectiveDate",
            "failureCode",
            "followUpNeeded",
            "inNetwork",
            "planStatus",
            "referralPhoneNumber"
        ]
    );
    // Schema fields are strings whose pattern admits the typed answers or `CANNOT ANSWER - <reason>`
    // (Vapi's JsonSchema has no anyOf); control fields keep their JSON types.
    let string = |pattern: Option<&str>| {
        let mut expected = json!({"type": "string"});
        if let Some(pattern) = pattern {
            expected["pattern"] = json!(pattern);
        }
        expected
    };
    let shape = |name: &str| {
        let mut property = properties[name].clone();
        let description = property
            .as_object_mut()
            .unwrap()
            .remove("description")
            .unwrap();
        assert!(
            description.as_str().unwrap().contains("CANNOT ANSWER - ")
                || name == "callOutcome"
                || name == "followUpNeeded"
                || name == "failureCode"
                || name == "referralPhoneNumber",
            "{name}: {description}"
        );
        property
    };
    assert_eq!(
        shape("planStatus"),
        string(Some("^(ACTIVE|INACTIVE|CANNOT ANSWER - .+)$"))
    );
    assert_eq!(
        shape("inNetwork"),
        string(Some("^(true|false|CANNOT ANSWER - .+)$"))
    );
    assert_eq!(
        shape("deductible"),
        string(Some(r"^(-?\d+(\.\d{1,2})?|CANNOT ANSWER - .+)$"))
    );
    assert_eq!(shape("effectiveDate"), string(None));
    assert_eq!(shape("followUpNeeded"), json!({"type": "boolean"}));
    assert_eq!(shape("failureCode"), string(None));
    assert_eq!(
        properties["callOutcome"]["enum"].as_array().unwrap().len(),
        7
    );
    assert_eq!(properties["callOutcome"]["type"], "string");
    assert!(properties["planStatus"]["description"]
        .as_str()
        .unwrap()
        .contains("ACTIVE, INACTIVE"));
    assert!(properties.values().all(|p| p["description"].is_string()));
}

#[test]
fn ended_reasons_map_to_call_ends() {
    let cases = [
        ("customer-busy", CallEnd::Busy),
        ("customer-did-not-answer", CallEnd::NoAnswer),
        ("voicemail", CallEnd::Voicemail),
        ("exceeded-max-duration", CallEnd::MaxDuration),
        ("silence-timed-out", CallEnd::HoldTooLong),
        ("twilio-reported-customer-misdialed", CallEnd::InvalidNumber),
        ("assistant-ended-call", CallEnd::Conversation),
        ("customer-ended-call", CallEnd::Conversation),
        ("assistant-said-end-call-phrase", CallEnd::Conversation),
        ("call.start.error-get-assistant", CallEnd::PlatformError),
        ("pipeline-error-openai-llm-failed", CallEnd::PlatformError),
        ("assistant-not-found", CallEnd::PlatformError),
        ("worker-shutdown", CallEnd::PlatformError),
    ];
    for (reason, end) in cases {
        assert_eq!(end_of(reason), end, "{reason}");
    }
}

fn ended(reason: &str, analysis: Option<Analysis>) -> Call {
    Call {
        id: "vapi-1".to_owned(),
        status: Some("ended".to_owned()),
        ended_reason: Some(reason.to_owned()),
        started_at: Some("2026-03-02T15:00:00.000Z".to_owned()),
        ended_at: Some("2026-03-02T15:12:30.600Z".to_owned()),
        analysis,
        artifact: Some(Artifact {
            transcript: Some("AI: Hello\nUser: Hi".to_owned()),
            recording_url: Some("https://storage.vapi.ai/rec.wav".to_owned()),
            ..Artifact::default()
        }),
        ..Call::default()
    }
}

#[test]
fn a_call_is_live_until_it_ended_with_its_analysis() {
    let live = Call {
        id: "vapi-1".to_owned(),
        status: Some("in-progress".to_owned()),
        ..Call::default()
    };
    let soon = "2026-03-02T15:13:30Z".parse().unwrap();
    assert_eq!(call_state(&live, soon), PlatformCallState::Live);
    // A conversation's verdict is in the analysis, which Vapi adds after the end.
    let unanalysed = ended("assistant-ended-call", None);
    assert_eq!(call_state(&unanalysed, soon), PlatformCallState::Live);
    // A busy line needs none.
    let busy = ended("customer-busy", None);
    assert!(matches!(
        call_state(&busy, soon),
        PlatformCallState::Ended(_)
    ));
    // Long after the end no analysis will come: the call is taken as it is.
    let late = "2026-03-02T15:20:00Z".parse().unwrap();
    assert!(matches!(
        call_state(&unanalysed, late),
        PlatformCallState::Ended(_)
    ));
}

#[test]
fn an_ended_call_carries_answers_transcript_summary_duration_and_recording() {
    let analysis = Analysis {
        summary: Some("Plan active.".to_owned()),
        structured_data:
            json!({"callOutcome": "answered", "planStatus": "ACTIVE", "inNetwork": true})
                .as_object()
                .cloned(),
    };
    let PlatformCallState::Ended(result) =
        call_state(&ended("assistant-ended-call", Some(analysis)), Utc::now())
    else {
        panic!("ended");
    };
    let CallResult::Platform(result) = *result else {
        panic!("a platform result");
    };
    assert_eq!(result.end, CallEnd::Conversation);
    assert_eq!(result.end_detail.as_deref(), Some("assistant-ended-call"));
    assert_eq!(result.duration_seconds, 751);
    assert_eq!(result.analysis["planStatus"], "ACTIVE");
    assert_eq!(result.analysis["inNetwork"], true);
    assert_eq!(result.summary.as_deref(), Some("Plan active."));
    assert!(result.transcript.unwrap().starts_with("AI: Hello"));
    assert_eq!(
        result.recording_url.as_deref(),
        Some("https://storage.vapi.ai/rec.wav")
    );
}

#[test]
fn the_calls_cost_in_dollars_is_its_price_in_cents() {
    let price = |cost: Option<f64>| {
        let call = Call {
            cost,
            ..ended("customer-busy", None)
        };
        match call_state(&call, Utc::now()) {
            PlatformCallState::Ended(result) => match *result {
                CallResult::Platform(result) => result.cost_cents,
                CallResult::Agent(_) => panic!("a platform result"),
            },
            PlatformCallState::Live => panic!("ended"),
        }
    };
    assert_eq!(price(Some(0.31)), Some(31));
    assert_eq!(price(Some(1.5649)), Some(156));
    assert_eq!(price(Some(1.565)), Some(157));
    assert_eq!(price(Some(0.0)), Some(0));
    assert_eq!(price(None), None);
    assert_eq!(price(Some(-1.0)), None);
}

#[test]
fn allowed_values_are_matched_literally_in_the_pattern() {
    let fields = [crate::dialer::platform::ExtractionField {
        name: "network".to_owned(),
        description: "Which network?".to_owned(),
        kind: crate::dialer::platform::ExtractionType::Choice(vec![
            "In network (INN)".to_owned(),
            "N/A".to_owned(),
            "1.5x".to_owned(),
        ]),
        control: false,
    }];
    let schema = super::extraction::structured_data_schema(&fields);
    assert_eq!(
        schema.properties["network"].pattern.as_deref(),
        Some(r"^(In network \(INN\)|N/A|1\.5x|CANNOT ANSWER - .+)$")
    );
    assert_eq!(schema.properties["network"].allowed, None);
}
