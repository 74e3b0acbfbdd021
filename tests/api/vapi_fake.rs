//! The Vapi client of `switchboard-actors` against the fake Vapi: the create body passes the fake's
//! checks of Vapi's documented shapes, server messages arrive with the call's secret and parse, reads and
//! the search by Switchboard's call id find the call. (The dialer's behaviour inside the server is tested
//! through the API in `vapi.rs`.)

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use switchboard_actors::dialer::vapi::events::{parse, secret_matches};
use switchboard_actors::dialer::vapi::mapping::report_from_call;
use switchboard_actors::dialer::vapi::{VapiClient, VapiConfig, VapiError};
use switchboard_actors::dialer::CallJob;
use switchboard_storage::{Disposition, SchemaDefinition, SchemaVersionRecord};

use actix_web::dev::ServerHandle;
use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
use switchboard_actors::dialer::vapi::{EventRefusal, EventVerdict, VapiDialer};
use switchboard_actors::dialer::Dialer;

use crate::fakes::vapi::{
    schemas_of, FakeVapi, Outcome, Scenario, API_KEY, ASSISTANT_ID, PHONE_NUMBER_ID, SERVER_SECRET,
};
use crate::helpers::TestConfig;
use crate::receiver::Receiver;

async fn setup() -> (FakeVapi, Receiver, Vec<SchemaDefinition>) {
    let schemas = schemas_of(&TestConfig::default().to_toml());
    (
        FakeVapi::start(schemas.clone(), 7).await,
        Receiver::start().await,
        schemas,
    )
}

fn client(fake: &FakeVapi, events: &Receiver, key: &str) -> VapiClient {
    VapiClient::new(VapiConfig {
        api_key: key.to_string(),
        base_url: fake.base_url(),
        assistant_id: ASSISTANT_ID.to_string(),
        phone_number_id: PHONE_NUMBER_ID.to_string(),
        server_secret: SERVER_SECRET.to_string(),
        events_url: events.url("/dialers/vapi/events"),
    })
    .unwrap()
}

fn job(schemas: &[SchemaDefinition], call_id: &str) -> CallJob {
    let definition = schemas
        .iter()
        .find(|s| s.request_type == "vob")
        .unwrap()
        .clone();
    CallJob {
        call_id: call_id.to_string(),
        request_id: "req-1".to_string(),
        seq: 1,
        attempt: 1,
        step_key: "primary".to_string(),
        step_index: 0,
        schema: Arc::new(SchemaVersionRecord {
            id: "vob-basic".to_string(),
            version: 1,
            published_at: Utc::now(),
            definition,
        }),
        inputs: BTreeMap::from([
            ("payerName".to_string(), "Aetna".to_string()),
            ("memberId".to_string(), "W123456789".to_string()),
        ]),
        number: "8005550100".to_string(),
        restarts: 0,
        seed: 7,
        time_scale: 60.0,
        ai_only: false,
        onshore_only: false,
    }
}

#[actix_web::test]
async fn a_created_call_reports_back_with_the_secret_and_answers() {
    let (fake, events, schemas) = setup().await;
    fake.script(vec![Scenario::of(Outcome::Answered)]);
    let client = client(&fake, &events, API_KEY);
    let job = job(&schemas, "call-a");
    let call = client.create_call(&client.create_body(&job)).await.unwrap();
    assert_eq!(call.status.as_deref(), Some("queued"));
    assert_eq!(call.switchboard_call_id(), Some("call-a"));
    assert!(fake.rejected().is_empty());

    let got = events.wait_for(3, Duration::from_secs(5)).await;
    let kinds: Vec<String> = got
        .iter()
        .map(|r| r.json()["message"]["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        kinds,
        ["status-update", "status-update", "end-of-call-report"]
    );
    for event in &got {
        assert_eq!(event.path, "/dialers/vapi/events");
        assert!(secret_matches(SERVER_SECRET, event.header("x-vapi-secret")));
    }
    let message = parse(&got[2].body).unwrap().message;
    let ended = message.ended_call().unwrap();
    assert_eq!(ended.id, call.id);
    let report = report_from_call(&ended, &job.schema.definition);
    assert_eq!(report.disposition, Disposition::Completed);
    let required: Vec<&str> = job
        .schema
        .definition
        .fields
        .iter()
        .filter(|f| f.required)
        .map(|f| f.name.as_str())
        .collect();
    assert!(!required.is_empty());
    for name in required {
        assert!(report.captured.contains_key(name), "{name} captured");
    }
    assert!(report.recording);

    let read = client.get_call(&call.id).await.unwrap().unwrap();
    assert!(read.has_ended());
    assert_eq!(
        report_from_call(&read, &job.schema.definition).captured,
        report.captured
    );
}

#[actix_web::test]
async fn a_wrong_key_is_refused_and_nothing_is_called() {
    let (fake, events, schemas) = setup().await;
    let client = client(&fake, &events, "not-the-key");
    let err = client
        .create_call(&client.create_body(&job(&schemas, "call-b")))
        .await
        .unwrap_err();
    assert!(matches!(err, VapiError::Status { status: 401 }), "{err:?}");
    assert!(!err.is_transient());
    assert!(fake.creates().is_empty());
}

#[actix_web::test]
async fn a_malformed_create_is_refused() {
    let (fake, events, schemas) = setup().await;
    let client = client(&fake, &events, API_KEY);
    let mut body = client.create_body(&job(&schemas, "call-c"));
    body.customer.number = Some("8005550100".to_string());
    let err = client.create_call(&body).await.unwrap_err();
    assert!(matches!(err, VapiError::Status { status: 400 }), "{err:?}");
    assert_eq!(fake.rejected().len(), 1);
}

#[actix_web::test]
async fn withheld_events_leave_reads_to_tell_the_end_and_the_call_is_found_by_our_id() {
    let (fake, events, schemas) = setup().await;
    fake.script(vec![Scenario::of(Outcome::Busy).withheld()]);
    let client = client(&fake, &events, API_KEY);
    let job = job(&schemas, "call-d");
    let since = Utc::now() - chrono::Duration::seconds(5);
    let call = client.create_call(&client.create_body(&job)).await.unwrap();
    fake.wait_until("the call ends", Duration::from_secs(5), |f| {
        f.calls()[0]["status"] == "ended"
    })
    .await;
    assert!(events.received().is_empty());
    let read = client.get_call(&call.id).await.unwrap().unwrap();
    assert_eq!(
        report_from_call(&read, &job.schema.definition).disposition,
        Disposition::Voicemail
    );

    let found = client
        .find_call("call-d", Some(since))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.id, call.id);
    assert!(client.find_call("call-zzz", None).await.unwrap().is_none());
    let later = Utc::now() + chrono::Duration::seconds(60);
    assert!(client
        .find_call("call-d", Some(later))
        .await
        .unwrap()
        .is_none());
    assert!(client.get_call("no-such-call").await.unwrap().is_none());
}

/// A dialer on the fake, with an events endpoint in front of it answering as the server's route does
/// (200, 400 malformed, 401 bad secret).
async fn dialer_on(fake: &FakeVapi, poll_every: Duration) -> (VapiDialer, ServerHandle) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let config = VapiConfig {
        api_key: API_KEY.to_string(),
        base_url: fake.base_url(),
        assistant_id: ASSISTANT_ID.to_string(),
        phone_number_id: PHONE_NUMBER_ID.to_string(),
        server_secret: SERVER_SECRET.to_string(),
        events_url: format!(
            "http://{}/dialers/vapi/events",
            listener.local_addr().unwrap()
        ),
    };
    let dialer = VapiDialer::new(VapiClient::new(config).unwrap(), poll_every);
    let serving = dialer.clone();
    let server = HttpServer::new(move || {
        let dialer = serving.clone();
        App::new().route(
            "/dialers/vapi/events",
            web::post().to(move |request: HttpRequest, body: web::Bytes| {
                let secret = request
                    .headers()
                    .get("x-vapi-secret")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string);
                let verdict = dialer.receive(&body, secret.as_deref());
                async move {
                    match verdict {
                        Ok(_) => HttpResponse::Ok().finish(),
                        Err(EventRefusal::Unauthorized) => HttpResponse::Unauthorized().finish(),
                        Err(EventRefusal::Malformed) => HttpResponse::BadRequest().finish(),
                    }
                }
            }),
        )
    })
    .workers(1)
    .disable_signals()
    .shutdown_timeout(0)
    .listen(listener)
    .unwrap()
    .run();
    let handle = server.handle();
    actix_web::rt::spawn(server);
    (dialer, handle)
}

#[actix_web::test]
async fn the_dialer_completes_a_call_from_its_end_of_call_report() {
    let (fake, _events, schemas) = setup().await;
    fake.script(vec![Scenario::of(Outcome::Answered)]);
    // Polling would take a minute: the report must be what ends the call.
    let (dialer, _server) = dialer_on(&fake, Duration::from_secs(60)).await;
    let job = job(&schemas, "call-e");
    let report = dialer.place(job.clone()).await;
    assert_eq!(report.disposition, Disposition::Completed);
    assert!(!report.captured.is_empty());
    assert_eq!(fake.creates().len(), 1);
    assert_eq!(fake.reads(), 0);
    // The fake records a delivery once Switchboard has answered it.
    fake.wait_until("three deliveries", Duration::from_secs(5), |f| {
        f.deliveries().len() == 3
    })
    .await;
    let deliveries = fake.deliveries();
    assert!(
        deliveries.iter().all(|d| d.status == Some(200)),
        "{deliveries:?}"
    );

    // A repeated report changes nothing; a wrong secret is refused.
    let report_event = deliveries
        .iter()
        .find(|d| d.kind == "end-of-call-report")
        .unwrap();
    assert_eq!(fake.redeliver(report_event).await, Some(200));
    let body = serde_json::to_vec(&report_event.body).unwrap();
    assert_eq!(
        dialer.receive(&body, Some(SERVER_SECRET)),
        Ok(EventVerdict::Duplicate)
    );
    assert_eq!(
        dialer.receive(&body, Some("wrong")),
        Err(EventRefusal::Unauthorized)
    );
    assert_eq!(dialer.receive(&body, None), Err(EventRefusal::Unauthorized));
    assert_eq!(
        dialer.receive(b"{}", Some(SERVER_SECRET)),
        Err(EventRefusal::Malformed)
    );
}

#[actix_web::test]
async fn withheld_events_are_made_up_for_by_polling() {
    let (fake, _events, schemas) = setup().await;
    fake.script(vec![Scenario::of(Outcome::Busy).withheld()]);
    let (dialer, _server) = dialer_on(&fake, Duration::from_millis(100)).await;
    let report = dialer.place(job(&schemas, "call-f")).await;
    assert_eq!(report.disposition, Disposition::Voicemail);
    assert!(fake.deliveries().is_empty());
    assert!(fake.reads() >= 1);
}

#[actix_web::test]
async fn a_restarted_attempt_attaches_to_its_call_instead_of_dialing_again() {
    let (fake, _events, schemas) = setup().await;
    fake.script(vec![
        Scenario::of(Outcome::Answered).lasting(Duration::from_millis(400))
    ]);
    let (dialer, _server) = dialer_on(&fake, Duration::from_secs(60)).await;
    let first = job(&schemas, "call-g");
    // The first run of the attempt is cut off right after its create, as a crash would.
    let cut =
        actix_web::rt::time::timeout(Duration::from_millis(100), dialer.place(first.clone())).await;
    assert!(cut.is_err());
    assert_eq!(fake.creates().len(), 1);
    let again = CallJob {
        restarts: 1,
        ..first
    };
    let report = dialer.place(again).await;
    assert_eq!(report.disposition, Disposition::Completed);
    assert_eq!(fake.creates().len(), 1, "no second call for the attempt");
    // Another attempt gets its own call.
    fake.script(vec![Scenario::of(Outcome::Voicemail)]);
    let report = dialer.place(job(&schemas, "call-h")).await;
    assert_eq!(report.disposition, Disposition::Voicemail);
    assert_eq!(fake.creates().len(), 2);
}
