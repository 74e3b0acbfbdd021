//! The payer page in headless Chromium: an operator (support) opens `#/payers/Aetna?operator=TOKEN` and
//! sees the week heat map of median holds (7 × 24 cells, the hours called filled, in the payer's zone)
//! and the cost per completed request, as the admin API reports them.

use serde_json::Value;

use super::browser::{attr, browser_or_skip, dump_dom, elements, screenshot};
use crate::helpers::spawn_app_with;
use crate::operators::operator;
use crate::payer_stats::{config, run_requests, stats};

/// From Monday 8:00 in Chicago to Wednesday 15:00 there.
const TO_WEDNESDAY_AFTERNOON: i64 = (2 * 24 + 7) * 3600;

/// The `byHour` entry of `weekday` and `hour`.
fn hour(stats: &Value, weekday: u64, hour: u64) -> &Value {
    stats["byHour"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["weekday"] == weekday && h["hour"] == hour)
        .unwrap()
}

#[actix_web::test]
async fn the_payer_page_shows_the_week_of_median_holds_and_the_cost_per_completed_request() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let app = spawn_app_with(&config()).await;
    let token = app.live_token().await;
    run_requests(&app, &token, 0, 6).await;
    app.advance_clock(TO_WEDNESDAY_AFTERNOON).await;
    let token = app.live_token().await;
    run_requests(&app, &token, 100, 6).await;
    let (_, learned) = stats(&app, "Aetna").await;
    let support = operator(&app, "sam", "support").await;

    let url = format!("{}/console/#/payers/Aetna?operator={support}", app.address);
    let dom = dump_dom(&browser, &url).await.stdout;
    let cells = elements(&dom, "heat-cell");
    assert_eq!(cells.len(), 7 * 24, "a cell per hour of the week: {dom}");
    let filled: Vec<_> = cells
        .iter()
        .filter(|c| attr(c, "data-calls") != "0")
        .collect();
    assert_eq!(filled.len(), 2, "Monday 8:00 and Wednesday 15:00");
    for (weekday, hour_of_day) in [(1, 8), (3, 15)] {
        let cell = filled
            .iter()
            .find(|c| {
                attr(c, "data-weekday") == weekday.to_string()
                    && attr(c, "data-hour") == hour_of_day.to_string()
            })
            .unwrap_or_else(|| panic!("{weekday} {hour_of_day} filled: {filled:?}"));
        let api = hour(&learned, weekday, hour_of_day);
        assert_eq!(attr(cell, "data-calls"), api["calls"].to_string());
        assert_eq!(
            attr(cell, "data-median"),
            api["medianHoldSeconds"].to_string()
        );
    }
    let cost = learned["costPerCompletedRequest"].as_str().unwrap();
    assert!(
        dom.contains(&format!(r#"data-testid="payer-cost">${cost}<"#)),
        "the cost per completed request, ${cost}: {dom}"
    );
    screenshot(&browser, &url, "console-payer.png", "1280,720").await;

    // Without an operator token the page asks for one.
    let url = format!("{}/console/#/payers/Aetna", app.address);
    let dom = dump_dom(&browser, &url).await.stdout;
    assert_eq!(elements(&dom, "queue-signin").len(), 1, "{dom}");
    assert!(elements(&dom, "heat-cell").is_empty());
}
