//! Calls placed through a voice platform: priced at what the platform charged (Retell's
//! `call_cost.combined_cost` in cents, Vapi's `cost` in dollars), or by the minute when the record that
//! ended the call carries no price; a price reported after the request ended changes nothing.

use serde_json::{json, Value};

use super::{checked_cost, seconds};
use crate::fakes::retell::{FakeRetell, Pricing as RetellPricing, Scenario as RetellScenario};
use crate::fakes::vapi::{schemas_of, FakeVapi, Outcome, Pricing, Scenario};
use crate::helpers::{create_vob, free_port, spawn_app_on, TestApp, TestConfig};
use crate::vapi::vapi_config;
use crate::voice_retell::app_with_retell;

#[actix_web::test]
async fn a_retell_call_costs_what_retell_charged_and_a_redial_adds_its_own() {
    let fake = FakeRetell::start().await;
    // 156.4 cents a call: rounded to the cent once per call, so the request's calls are 2 x 1.56.
    fake.price_calls(RetellPricing::Combined(156.4));
    fake.force(&[RetellScenario::Voicemail, RetellScenario::Answered]);
    let app = app_with_retell(&fake, |_| {}).await;
    let token = app.live_token().await;
    let id = create_vob(&app, &token).await;

    let done = app.wait_terminal(&token, &id).await;
    assert_eq!(done["state"], "SUCCESS", "{done}");
    assert_eq!(
        done["cost"],
        json!({"currency": "USD", "amount": "3.12", "calls": "3.12", "electronic": "0.00"})
    );
    let calls = done["contributingCalls"].as_array().unwrap();
    assert_eq!(calls.len(), 2, "{done}");
    for call in calls {
        assert_eq!(call["cost"], "1.56", "{call}");
    }
    checked_cost(&done);
}

#[actix_web::test]
async fn a_retell_call_without_call_cost_is_priced_by_its_started_minutes() {
    let fake = FakeRetell::start().await;
    fake.price_calls(RetellPricing::Unreported);
    fake.force(&[RetellScenario::Answered]);
    let app = app_with_retell(&fake, |config| {
        config.set("dialer.cost_per_minute", 0.15);
    })
    .await;
    let token = app.live_token().await;
    let id = create_vob(&app, &token).await;

    let done = app.wait_terminal(&token, &id).await;
    assert_eq!(done["state"], "SUCCESS", "{done}");
    // 7 min 1 s: eight started minutes at 0.15.
    assert_eq!(done["callDuration"], "00:07:01");
    assert_eq!(done["cost"]["calls"], "1.20", "{done}");
    assert_eq!(done["contributingCalls"][0]["cost"], "1.20");
    assert_eq!(done["cost"]["amount"], "1.20");
}

#[actix_web::test]
async fn a_price_reported_after_the_request_ended_changes_nothing() {
    let fake = FakeRetell::start().await;
    fake.price_calls(RetellPricing::Combined(80.0));
    fake.force(&[RetellScenario::Answered]);
    let app = app_with_retell(&fake, |_| {}).await;
    let token = app.live_token().await;
    let id = create_vob(&app, &token).await;
    let done = app.wait_terminal(&token, &id).await;
    assert_eq!(done["cost"]["calls"], "0.80", "{done}");

    // Retell sends the analysis again with another price (a retried or corrected webhook).
    let created = fake.creates();
    let ours = created[0]["metadata"]["switchboard_call_id"]
        .as_str()
        .unwrap();
    let mut call = fake.call_for(ours).unwrap();
    call["call_cost"]["combined_cost"] = json!(990.0);
    let (status, _) = fake.send_event("call_analyzed", &call).await;
    assert!(status < 300, "acknowledged: {status}");

    let again = app.read_request(&token, &id).await;
    assert_eq!(again["cost"], done["cost"], "final once terminal");
    assert_eq!(again["contributingCalls"][0]["cost"], "0.80");
}

/// A Switchboard placing its calls through `fake`, with `tweak` applied to the config last.
async fn vapi_app(fake: &FakeVapi, tweak: impl FnOnce(&mut TestConfig)) -> TestApp {
    let port = free_port();
    let mut config = vapi_config(fake, port);
    tweak(&mut config);
    spawn_app_on(&config, &format!("127.0.0.1:{port}")).await
}

async fn fake_vapi() -> FakeVapi {
    FakeVapi::start(schemas_of(&TestConfig::default().to_toml()), 7).await
}

#[actix_web::test]
async fn a_vapi_call_costs_what_vapi_charged_in_dollars() {
    let fake = fake_vapi().await;
    fake.script(vec![
        Scenario::of(Outcome::Answered).priced(Pricing::Total(1.5649))
    ]);
    let app = vapi_app(&fake, |_| {}).await;
    let token = app.live_token().await;
    let id = create_vob(&app, &token).await;

    let done = app.wait_terminal(&token, &id).await;
    assert_eq!(done["state"], "SUCCESS", "{done}");
    assert_eq!(
        done["cost"],
        json!({"currency": "USD", "amount": "1.56", "calls": "1.56", "electronic": "0.00"})
    );
    assert_eq!(done["contributingCalls"][0]["cost"], "1.56");
    // What Vapi sent is the documented shape: `cost` beside its `costBreakdown`.
    let ended: Value = fake.calls()[0].clone();
    assert_eq!(ended["cost"], 1.5649);
    assert_eq!(ended["costBreakdown"]["total"], 1.5649);
}

#[actix_web::test]
async fn a_vapi_call_without_cost_is_priced_by_its_started_minutes() {
    let fake = fake_vapi().await;
    fake.script(vec![
        Scenario::of(Outcome::Answered).priced(Pricing::Unreported)
    ]);
    let app = vapi_app(&fake, |config| {
        config.set("dialer.cost_per_minute", 0.5);
    })
    .await;
    let token = app.live_token().await;
    let id = create_vob(&app, &token).await;

    let done = app.wait_terminal(&token, &id).await;
    assert_eq!(done["state"], "SUCCESS", "{done}");
    let call = &done["contributingCalls"][0];
    let minutes = seconds(call["callDuration"].as_str().unwrap()).div_ceil(60);
    assert!(minutes > 0, "{call}");
    assert_eq!(call["cost"], super::dollars(minutes * 50), "{call}");
    assert_eq!(checked_cost(&done), (minutes * 50, 0));
}
