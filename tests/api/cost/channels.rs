//! The simulator's calls by the minute, clearinghouse inquiries by the transaction, both channels on one
//! request, sandbox requests at nothing, list entries without `cost`, and `/metrics` summing what the
//! requests say.

use serde_json::{json, Value};

use super::{checked_cost, cost_metric, dollars, scrape, seconds, wait_cost_metric};
use crate::electronic_stedi::{config as stedi_config, create as create_with, inputs};
use crate::fakes::stedi::FakeStedi;
use crate::helpers::{spawn_app_with, TestApp, TestConfig};

/// Production `vob-basic` requests on the payer simulator, one per member id, all terminal.
async fn simulated_requests(app: &TestApp, token: &str, count: usize) -> Vec<Value> {
    let mut ids = Vec::new();
    for n in 0..count {
        let mut inputs = inputs(&format!("W{:09}", 200_000_000 + n));
        inputs["phoneNumber"] = json!("8005550123");
        ids.push(create_with(app, token, "vob-basic", inputs).await);
    }
    let mut reads = Vec::new();
    for id in &ids {
        reads.push(app.wait_terminal(token, id).await);
    }
    reads
}

#[actix_web::test]
async fn a_call_the_simulator_reports_no_price_for_costs_its_started_minutes_at_the_rate() {
    let mut config = TestConfig::default();
    config
        .dispatching()
        .set("dialer.cost_per_minute", 0.25)
        .features(&["attempt_details"]);
    let app = spawn_app_with(&config).await;
    let token = app.live_token().await;
    let reads = simulated_requests(&app, &token, 6).await;

    let mut priced_calls = 0;
    for read in &reads {
        let (calls, electronic) = checked_cost(read);
        assert_eq!(
            electronic, 0,
            "no electronic channel on the account: {read}"
        );
        for call in read["contributingCalls"].as_array().into_iter().flatten() {
            let minutes = seconds(call["callDuration"].as_str().unwrap()).div_ceil(60);
            assert_eq!(call["cost"], dollars(minutes * 25), "{call}");
            priced_calls += 1;
        }
        if read["state"] != "FAILURE" {
            assert!(calls > 0, "a call that reached someone lasted: {read}");
        }
    }
    assert!(priced_calls > 0, "some request ended with its calls listed");

    // The metric adds up what the requests say, in dollars.
    let total: u64 = reads.iter().map(|read| checked_cost(read).0).sum();
    wait_cost_metric(&app, "call", total as f64 / 100.0).await;
    assert_eq!(cost_metric(&scrape(&app).await, "electronic"), 0.0);
}

#[actix_web::test]
async fn a_clearinghouse_inquiry_costs_the_price_per_transaction_and_one_never_answered_nothing() {
    let fake = FakeStedi::start().await;
    let app = spawn_app_with(&stedi_config(&fake)).await;
    let token = app.live_token().await;

    let answered = create_with(&app, &token, "eligibility-check", inputs("W123456789")).await;
    let answered = app.wait_terminal(&token, &answered).await;
    assert_eq!(answered["modality"], "digital_only", "{answered}");
    assert_eq!(
        answered["cost"],
        json!({"currency": "USD", "amount": "0.30", "calls": "0.00", "electronic": "0.30"})
    );

    // A rejection by the payer is an answered transaction, billed like any other.
    let rejected = create_with(&app, &token, "eligibility-check", inputs("AAA75")).await;
    let rejected = app.wait_terminal(&token, &rejected).await;
    assert_eq!(rejected["cost"]["electronic"], "0.30", "{rejected}");

    // Every try refused with a 502: no transaction went through.
    let down = create_with(&app, &token, "eligibility-check", inputs("DOWNALL")).await;
    let down = app.wait_terminal(&token, &down).await;
    assert_eq!(down["cost"]["electronic"], "0.00", "{down}");
    checked_cost(&down);

    wait_cost_metric(&app, "electronic", 0.6).await;
}

#[actix_web::test]
async fn a_request_answered_electronically_then_by_phone_sums_both_channels() {
    let fake = FakeStedi::start().await;
    let mut config = stedi_config(&fake);
    config.set("electronic.cost_per_transaction", 0.45);
    let app = spawn_app_with(&config).await;
    let token = app.live_token().await;
    let id = create_with(&app, &token, "vob-basic", inputs("W123456789")).await;

    let read = app.wait_terminal(&token, &id).await;
    assert_eq!(read["modality"], "digital_plus_phone", "{read}");
    let (calls, electronic) = checked_cost(&read);
    assert_eq!(electronic, 45, "{read}");
    assert!(calls > 0, "{read}");
    assert_eq!(read["cost"]["amount"], dollars(calls + 45));

    wait_cost_metric(&app, "call", calls as f64 / 100.0).await;
    wait_cost_metric(&app, "electronic", 0.45).await;
}

#[actix_web::test]
async fn sandbox_requests_cost_nothing_and_list_entries_carry_no_cost() {
    let mut config = TestConfig::default();
    config.dispatching().features(&["electronic_channels"]);
    let app = spawn_app_with(&config).await;
    let token = app.sandbox_token().await;
    let mut ids = Vec::new();
    for scenario in ["success", "redial", "digital_plus_phone"] {
        let mut inputs = inputs("W123456789");
        inputs["sandboxScenario"] = json!(scenario);
        ids.push(create_with(&app, &token, "vob-basic", inputs).await);
    }
    for id in &ids {
        let read = app.wait_terminal(&token, id).await;
        assert_eq!(
            read["cost"],
            json!({"currency": "USD", "amount": "0.00", "calls": "0.00", "electronic": "0.00"}),
            "{read}"
        );
        for call in read["contributingCalls"].as_array().into_iter().flatten() {
            assert_eq!(call["cost"], "0.00", "{call}");
        }
    }

    let (status, list) = app.get_json("/v1/requests", &token).await;
    assert_eq!(status, 200, "{list}");
    let entries = list["requests"].as_array().unwrap();
    assert_eq!(entries.len(), ids.len(), "{list}");
    for entry in entries {
        assert!(entry.get("cost").is_none(), "lists carry no cost: {entry}");
    }
    let text = scrape(&app).await;
    assert_eq!(cost_metric(&text, "call"), 0.0);
    assert_eq!(cost_metric(&text, "electronic"), 0.0);
}
