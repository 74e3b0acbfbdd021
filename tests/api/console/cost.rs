//! The request page shows what the request cost and what each call cost, as the API says, in headless
//! Chromium (see `browser` for the set-up and the skip rule).

use super::browser::{attr, browser_or_skip, detail_url, dump_dom, elements};
use super::console_get;
use crate::fakes::retell::{FakeRetell, Pricing, Scenario};
use crate::helpers::create_vob;
use crate::voice_retell::app_with_retell;

#[actix_web::test]
async fn the_request_page_shows_the_requests_cost_and_each_calls_in_headless_chromium() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let fake = FakeRetell::start().await;
    fake.price_calls(Pricing::Combined(156.4));
    fake.force(&[Scenario::Voicemail, Scenario::Answered]);
    let app = app_with_retell(&fake, |_| {}).await;
    let token = app.live_token().await;
    let id = create_vob(&app, &token).await;
    let read = app.wait_terminal(&token, &id).await;
    assert_eq!(read["cost"]["amount"], "3.12", "{read}");

    let (status, detail) = console_get(&app, &format!("/console/api/requests/{id}"), &token).await;
    assert_eq!(status, 200, "{detail}");
    assert_eq!(
        detail["callCosts"],
        serde_json::json!({"1": "1.56", "2": "1.56"})
    );

    let run = dump_dom(&browser, &detail_url(&app, &id, &token)).await;
    let dom = &run.stdout;
    let shown = elements(dom, "request-cost");
    assert_eq!(shown.len(), 1, "the cost is shown: {dom}");
    assert_eq!(attr(&shown[0], "data-amount"), "3.12");
    assert_eq!(attr(&shown[0], "data-calls"), "3.12");
    assert_eq!(attr(&shown[0], "data-electronic"), "0.00");
    assert!(dom.contains("$3.12"), "the amount is written out");
    let calls = elements(dom, "call-cost");
    let api_calls = read["contributingCalls"].as_array().unwrap();
    assert_eq!(calls.len(), api_calls.len(), "one cost per call: {calls:?}");
    for (shown, api) in calls.iter().zip(api_calls) {
        assert_eq!(attr(shown, "data-call"), api["call"].to_string());
        assert_eq!(attr(shown, "data-cost"), api["cost"].as_str().unwrap());
    }
}
