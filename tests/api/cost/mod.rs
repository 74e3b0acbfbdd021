//! What each request costs (operator contract §11), black-box: the single read's `cost` and each
//! contributing call's, from a voice platform's own price (Retell's `call_cost`, Vapi's `cost`), from the
//! minutes of a call whose dialer reports none, from clearinghouse inquiries, summed over both channels;
//! nothing for sandbox requests; never on list entries; `switchboard_cost_usd_total` on `/metrics`, also
//! across a `kill -9`; and the start-up errors of the two rates.

mod channels;
mod config;
mod platforms;
mod restart;

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::helpers::Api;

/// `HH:MM:SS` in seconds.
fn seconds(duration: &str) -> u64 {
    duration
        .split(':')
        .map(|part| part.parse::<u64>().unwrap())
        .fold(0, |total, part| total * 60 + part)
}

/// Dollars with two places of `cents`.
fn dollars(cents: u64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

/// Cents of a wire amount (`"3.42"`), checking its shape.
fn cents(amount: &Value) -> u64 {
    let text = amount
        .as_str()
        .unwrap_or_else(|| panic!("{amount} is a string"));
    let (whole, fraction) = text.split_once('.').expect("two places");
    assert_eq!(fraction.len(), 2, "{text}: two places");
    whole.parse::<u64>().unwrap() * 100 + fraction.parse::<u64>().unwrap()
}

/// Checks the single read's `cost` is whole (currency, both channels, their sum) and each contributing
/// call's is one of the `calls` it sums; answers (calls, electronic) in cents.
fn checked_cost(read: &Value) -> (u64, u64) {
    let cost = &read["cost"];
    assert_eq!(cost["currency"], "USD", "{read}");
    let (calls, electronic) = (cents(&cost["calls"]), cents(&cost["electronic"]));
    assert_eq!(cents(&cost["amount"]), calls + electronic, "{cost}");
    assert_eq!(cost.as_object().unwrap().len(), 4, "{cost}");
    if let Some(contributing) = read["contributingCalls"].as_array() {
        let each: u64 = contributing.iter().map(|c| cents(&c["cost"])).sum();
        assert_eq!(each, calls, "the calls' costs sum to cost.calls: {read}");
    }
    (calls, electronic)
}

/// The value of `switchboard_cost_usd_total{channel}` in the text exposition.
fn cost_metric(text: &str, channel: &str) -> f64 {
    let series = format!("switchboard_cost_usd_total{{channel=\"{channel}\"}} ");
    text.lines()
        .find_map(|line| line.strip_prefix(&series))
        .unwrap_or_else(|| panic!("no {series}in:\n{text}"))
        .parse()
        .unwrap()
}

/// Waits (5 s at most) until `switchboard_cost_usd_total{channel}` reads `dollars`: the counter is added
/// just after the terminal write, which a read may see first.
async fn wait_cost_metric(api: &Api, channel: &str, dollars: f64) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let text = scrape(api).await;
        let value = cost_metric(&text, channel);
        if value == dollars {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{channel}: {value}, never {dollars}:\n{text}"
        );
        actix_web::rt::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn scrape(api: &Api) -> String {
    let response = api.client.get(api.url("/metrics")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    response.text().await.unwrap()
}
