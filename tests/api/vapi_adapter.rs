//! The Vapi adapter of `switchboard-actors` against the fake Vapi, below the server: a wrong key and a
//! malformed create are refused for good, and the search by Switchboard's call id pages through Vapi's
//! newest-first listing until it finds the call.

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::Utc;
use switchboard_actors::dialer::platform::extraction::{extraction_fields, prompt_variables};
use switchboard_actors::dialer::platform::{PlatformAdapter, PlatformCallRequest, PlatformError};
use switchboard_actors::dialer::vapi::{VapiAdapter, VapiConfig};
use switchboard_actors::dialer::CallJob;
use switchboard_storage::SchemaVersionRecord;

use crate::fakes::vapi::{
    schemas_of, FakeVapi, Outcome, Scenario, API_KEY, ASSISTANT_ID, PHONE_NUMBER_ID, SERVER_SECRET,
};
use crate::helpers::{free_port, TestConfig};

fn adapter(fake: &FakeVapi, key: &str, phone_number_id: &str) -> VapiAdapter {
    VapiAdapter::new(&VapiConfig {
        api_key: key.to_owned(),
        base_url: fake.base_url(),
        assistant_id: ASSISTANT_ID.to_owned(),
        phone_number_id: phone_number_id.to_owned(),
        server_secret: SERVER_SECRET.to_owned(),
        // Nobody listens there: the fake's messages go nowhere, as for a server that is down.
        server_url: format!("http://127.0.0.1:{}/dialers/vapi/events", free_port()),
    })
    .unwrap()
}

fn request(call_id: &str) -> PlatformCallRequest {
    let definition = schemas_of(&TestConfig::default().to_toml())
        .into_iter()
        .find(|s| s.request_type == "vob")
        .unwrap();
    let schema = Arc::new(SchemaVersionRecord {
        id: "vob-basic".to_owned(),
        version: 1,
        published_at: Utc::now(),
        definition,
    });
    let inputs = BTreeMap::from([
        ("payerName".to_owned(), "Aetna".to_owned()),
        ("memberId".to_owned(), "W123456789".to_owned()),
    ]);
    PlatformCallRequest {
        extraction: extraction_fields(&schema),
        variables: prompt_variables(&schema, &inputs, &BTreeMap::new()),
        job: CallJob {
            call_id: call_id.to_owned().into(),
            request_id: "req-1".to_owned().into(),
            seq: 1,
            attempt: 1,
            step_key: "primary".to_owned().into(),
            step_index: 0,
            schema,
            inputs,
            number: "8005550123".to_owned(),
            placed_at: Utc::now(),
            payer_zone: chrono_tz::Tz::UTC,
            payer_notes: String::new(),
            known: Default::default(),
            restarts: 0,
            seed: 7,
            time_scale: 60.0,
            ai_only: false,
            onshore_only: false,
        },
    }
}

async fn fake() -> FakeVapi {
    let fake = FakeVapi::start(schemas_of(&TestConfig::default().to_toml()), 7).await;
    fake.always(Scenario::of(Outcome::Voicemail).withheld());
    fake
}

#[actix_web::test]
async fn a_wrong_key_or_an_unknown_number_is_refused_for_good() {
    let fake = fake().await;
    let wrong_key = adapter(&fake, "not-the-key", PHONE_NUMBER_ID)
        .create(&request("c-1"))
        .await;
    assert!(
        matches!(wrong_key, Err(PlatformError::Rejected(_))),
        "{wrong_key:?}"
    );
    let unknown = adapter(&fake, API_KEY, "no-such-number")
        .create(&request("c-2"))
        .await;
    assert!(
        matches!(unknown, Err(PlatformError::Rejected(_))),
        "{unknown:?}"
    );
    assert!(fake.creates().is_empty());
    assert_eq!(fake.rejected().len(), 2);
}

#[actix_web::test]
async fn the_search_by_call_id_pages_through_the_listing() {
    let fake = fake().await;
    let vapi = adapter(&fake, API_KEY, PHONE_NUMBER_ID);
    // The call sought is the oldest of 130: on the second page of 100.
    let template = request("sought");
    let sought = vapi.create(&template).await.unwrap();
    for n in 0..129 {
        let mut other = template.clone();
        other.job.call_id = format!("other-{n}").into();
        vapi.create(&other).await.unwrap();
    }
    assert_eq!(vapi.find(&"sought".into()).await.unwrap(), Some(sought));
    assert!(fake.lists() >= 2, "a second page was read");
    assert_eq!(vapi.find(&"never-created".into()).await.unwrap(), None);
    let newest = fake.calls().last().unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(vapi.find(&"other-128".into()).await.unwrap(), Some(newest));
}
