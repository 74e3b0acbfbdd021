//! Limits of real calls on the manual clock: `max_concurrent_calls` (attempts wait for a slot, never fail)
//! and calling hours (attempts outside them wait; the sandbox keeps running), both visible in `/metrics`.

use std::time::Duration;

use crate::fakes::retell::{FakeRetell, Scenario};
use crate::helpers::{status_and_json, TestApp};
use crate::voice_retell::{app_with_retell, create};

async fn metric(app: &TestApp, series: &str) -> f64 {
    let text = app
        .client
        .get(app.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .find_map(|line| {
            line.strip_prefix(series)
                .and_then(|rest| rest.trim().parse().ok())
        })
        .unwrap_or_else(|| panic!("no series {series}"))
}

#[actix_web::test]
async fn attempts_beyond_max_concurrent_calls_wait_for_a_slot_and_then_run() {
    let fake = FakeRetell::start().await;
    fake.hold_calls(true);
    fake.force(&[Scenario::Answered, Scenario::Answered]);
    let app = app_with_retell(&fake, |c| {
        c.set("dialer.max_concurrent_calls", 1);
    })
    .await;
    let token = app.live_token().await;
    let first = create(&app, &token).await;
    let second = create(&app, &token).await;

    fake.wait_creates(1).await;
    actix_web::rt::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(
        fake.creates().len(),
        1,
        "a second call was placed beyond the cap"
    );
    assert_eq!(
        metric(&app, "switchboard_call_slots{state=\"limit\"}").await,
        1.0
    );
    assert_eq!(
        metric(&app, "switchboard_call_slots{state=\"in_use\"}").await,
        1.0
    );
    assert_eq!(
        metric(&app, "switchboard_calls_waiting{reason=\"slot\"}").await,
        1.0
    );

    fake.release_calls();
    for id in [&first, &second] {
        let done = app.wait_terminal(&token, id).await;
        assert_eq!(
            done["state"], "SUCCESS",
            "a waiting attempt must not fail: {done}"
        );
    }
    assert_eq!(fake.creates().len(), 2);
    assert_eq!(
        metric(&app, "switchboard_calls_waiting{reason=\"slot\"}").await,
        0.0
    );
    assert_eq!(
        metric(&app, "switchboard_call_slots{state=\"in_use\"}").await,
        0.0
    );
}

#[actix_web::test]
async fn outside_the_payers_calling_hours_the_attempt_waits_while_the_sandbox_runs() {
    let fake = FakeRetell::start().await;
    fake.force(&[Scenario::Answered]);
    // The test clock starts on a Monday at 09:00 in the account's zone; this payer answers from 10:00.
    let app = app_with_retell(&fake, |c| {
        let payers = c.table_mut()["payers"].as_array_mut().unwrap();
        let aetna = payers
            .iter_mut()
            .find(|p| p["name"].as_str() == Some("Aetna"))
            .unwrap();
        aetna
            .as_table_mut()
            .unwrap()
            .insert("calling_hours".into(), "10:00-17:00".into());
    })
    .await;
    let token = app.live_token().await;
    let id = create(&app, &token).await;

    let sandbox = app.sandbox_token().await;
    let sandbox_id = create(&app, &sandbox).await;
    let done = app.wait_terminal(&sandbox, &sandbox_id).await;
    assert_ne!(
        done["state"], "PROCESSING",
        "the sandbox is never held by calling hours"
    );

    actix_web::rt::time::sleep(Duration::from_millis(600)).await;
    assert!(
        fake.creates().is_empty(),
        "a call was placed before the payer's hours"
    );
    assert_eq!(
        metric(&app, "switchboard_calls_waiting{reason=\"calling_hours\"}").await,
        1.0
    );
    let (_, read) = status_and_json(app.get(&format!("/v1/requests/{id}"), &token).await).await;
    assert_eq!(read["state"], "PROCESSING");

    app.advance_clock(3600).await;
    let token = app.live_token().await;
    let done = app.wait_terminal(&token, &id).await;
    assert_eq!(done["state"], "SUCCESS", "{done}");
    assert_eq!(fake.creates().len(), 1);
    assert_eq!(
        metric(&app, "switchboard_calls_waiting{reason=\"calling_hours\"}").await,
        0.0
    );
}

#[actix_web::test]
async fn a_payer_in_another_zone_is_called_within_its_own_hours_not_the_accounts() {
    let fake = FakeRetell::start().await;
    fake.force(&[Scenario::Answered]);
    // 13:00 UTC on a Monday: 08:00 for the account in New York, 05:00 at the payer in Los Angeles.
    let app = app_with_retell(&fake, |c| {
        c.set("clock.start", "2026-11-23T13:00:00Z");
        c.demo_account()
            .insert("timezone".into(), "America/New_York".into());
        let payers = c.table_mut()["payers"].as_array_mut().unwrap();
        let aetna = payers
            .iter_mut()
            .find(|p| p["name"].as_str() == Some("Aetna"))
            .unwrap();
        aetna
            .as_table_mut()
            .unwrap()
            .insert("timezone".into(), "America/Los_Angeles".into());
    })
    .await;
    let token = app.live_token().await;
    let id = create(&app, &token).await;

    // The default hours (08:00-17:00) are open in New York but not yet in Los Angeles.
    for (advance, hour) in [(0, "05:00"), (2 * 3600, "07:00")] {
        if advance > 0 {
            app.advance_clock(advance).await;
        }
        actix_web::rt::time::sleep(Duration::from_millis(600)).await;
        assert!(
            fake.creates().is_empty(),
            "the payer was called at {hour} in its own zone"
        );
        assert_eq!(
            metric(&app, "switchboard_calls_waiting{reason=\"calling_hours\"}").await,
            1.0,
            "at {hour} Pacific"
        );
    }

    app.advance_clock(3600).await;
    let token = app.live_token().await;
    let done = app.wait_terminal(&token, &id).await;
    assert_eq!(done["state"], "SUCCESS", "{done}");
    assert_eq!(fake.creates().len(), 1);
}
