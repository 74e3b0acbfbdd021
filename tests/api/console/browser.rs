//! The console in a real browser: headless Chromium (Debian's `chromium` package, installed by `.ci/run`)
//! opens request details signed in through a `#...?token=` link and the test reads the rendered DOM: the
//! follow-up's two steps with the second triggered by the first, the redial's two calls in one step, and
//! result rows that trace to the call, step and schema the API's `resultSources` chain names. It also
//! saves screenshots (see `screenshot` for where).
//!
//! Without Chromium the test fails, naming the package to install; outside CI,
//! `SWITCHBOARD_SKIP_BROWSER=1` turns that into a printed skip.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use regex::Regex;
use serde_json::{json, Value};

use super::{claim_inputs, create, create_scenario, LEG, SCHEMA};
use crate::helpers::{output_within, spawn_app_with, TestApp, TestConfig};
use crate::receiver::Receiver;

/// How long one Chromium run may take before it is killed.
const BROWSER_LIMIT: Duration = Duration::from_secs(90);

/// The Chromium binary, or why the test cannot run.
fn chromium() -> Result<PathBuf, String> {
    let candidates = ["/usr/bin/chromium", "/usr/bin/chromium-browser"];
    if let Some(found) = candidates.iter().map(PathBuf::from).find(|p| p.exists()) {
        return Ok(found);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser"] {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    Err(
        "headless Chromium was not found (looked for /usr/bin/chromium and chromium on PATH); \
         install Debian's package: apt-get install -y chromium"
            .to_owned(),
    )
}

/// The browser, or `None` when the test may be skipped (outside CI, with SWITCHBOARD_SKIP_BROWSER=1).
pub(super) fn browser_or_skip() -> Option<PathBuf> {
    match chromium() {
        Ok(path) => Some(path),
        Err(why) if std::env::var_os("CI").is_some() => {
            panic!("CI must run the browser test: {why}")
        }
        Err(why) if std::env::var("SWITCHBOARD_SKIP_BROWSER").as_deref() == Ok("1") => {
            eprintln!("skipping the console browser test (SWITCHBOARD_SKIP_BROWSER=1): {why}");
            None
        }
        Err(why) => panic!("{why}. To skip this test outside CI, set SWITCHBOARD_SKIP_BROWSER=1."),
    }
}

/// What one Chromium run produced.
pub(super) struct Run {
    pub(super) stdout: String,
    elapsed: Duration,
}

/// Runs headless Chromium on `url` with `extra` flags (off the test's thread: the server's actors share it).
async fn run_chromium(browser: &Path, url: &str, extra: &[String]) -> Run {
    let profile = tempfile::tempdir().unwrap();
    let mut command = Command::new(browser);
    command
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
            "--mute-audio",
            "--force-device-scale-factor=1",
            "--run-all-compositor-stages-before-draw",
            "--virtual-time-budget=10000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let output = actix_web::rt::task::spawn_blocking(move || {
        let child = command.spawn().expect("chromium starts");
        output_within(child, BROWSER_LIMIT).unwrap_or_else(|output| {
            panic!(
                "chromium did not finish within {BROWSER_LIMIT:?}; stderr: {}",
                String::from_utf8_lossy(&output.stderr)
            )
        })
    })
    .await
    .unwrap();
    drop(profile);
    let elapsed = started.elapsed();
    assert!(
        output.status.success(),
        "chromium failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    Run {
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        elapsed,
    }
}

/// The DOM of `url` after scripts ran.
pub(super) async fn dump_dom(browser: &Path, url: &str) -> Run {
    run_chromium(browser, url, &["--dump-dom".to_owned()]).await
}

/// Saves a screenshot of `url` (`size` is `WIDTH,HEIGHT`) and checks it is a real image. Runs write into
/// `target/console-screenshots/`; with `SWITCHBOARD_UPDATE_SCREENSHOTS=1` they refresh the ones kept in
/// `docs/screenshots/` (shown by the README), so an ordinary test run leaves the work tree clean.
pub(super) async fn screenshot(browser: &Path, url: &str, name: &str, size: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = if std::env::var("SWITCHBOARD_UPDATE_SCREENSHOTS").as_deref() == Ok("1") {
        root.join("docs/screenshots")
    } else {
        root.join("target/console-screenshots")
    };
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    let run = run_chromium(
        browser,
        url,
        &[
            format!("--screenshot={}", path.display()),
            format!("--window-size={size}"),
        ],
    )
    .await;
    let bytes =
        std::fs::read(&path).unwrap_or_else(|e| panic!("{} was not written: {e}", path.display()));
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "{name} is a PNG");
    assert!(
        bytes.len() > 20_000,
        "{name} is only {} bytes: a blank page?",
        bytes.len()
    );
    eprintln!("{name}: {} bytes in {:?}", bytes.len(), run.elapsed);
    path
}

/// Every opening tag carrying `data-testid="{testid}"`, as attribute maps, in document order.
pub(super) fn elements(dom: &str, testid: &str) -> Vec<BTreeMap<String, String>> {
    let tag = Regex::new(&format!(r#"<[a-z0-9]+\s[^>]*data-testid="{testid}"[^>]*>"#)).unwrap();
    let attribute = Regex::new(r#"([a-z-]+)="([^"]*)""#).unwrap();
    tag.find_iter(dom)
        .map(|m| {
            attribute
                .captures_iter(m.as_str())
                .map(|c| (c[1].to_owned(), c[2].replace("&amp;", "&")))
                .collect()
        })
        .collect()
}

pub(super) fn attr<'a>(element: &'a BTreeMap<String, String>, name: &str) -> &'a str {
    element
        .get(name)
        .unwrap_or_else(|| panic!("{name} missing on {element:?}"))
}

pub(super) fn detail_url(app: &TestApp, id: &str, token: &str) -> String {
    format!("{}/console/#/requests/{id}?token={token}", app.address)
}

/// Checks that the DOM's result rows trace exactly as the API's chain does (spec 2.6 rule 5):
/// `resultSources[field]` -> `contributingCalls[call].callStep` -> `callSteps[key].schemaId`.
fn assert_results_trace(dom: &str, request: &Value) -> Vec<String> {
    let rows = elements(dom, "result-row");
    let results = request["results"].as_object().unwrap();
    assert_eq!(rows.len(), results.len(), "one row per result field");
    let mut schemas = Vec::new();
    for row in &rows {
        let field = attr(row, "data-field");
        assert!(results.contains_key(field), "{field} is a result");
        let call_number = &request["resultSources"][field];
        let call = request["contributingCalls"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["call"] == *call_number)
            .unwrap_or_else(|| panic!("{field}: call {call_number} is a contributing call"));
        let step = request["callSteps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["key"] == call["callStep"])
            .unwrap();
        assert_eq!(
            attr(row, "data-source-call"),
            call_number.to_string(),
            "{field}"
        );
        assert_eq!(
            attr(row, "data-source-step"),
            call["callStep"].as_str().unwrap(),
            "{field}"
        );
        assert_eq!(
            attr(row, "data-source-schema"),
            step["schemaId"].as_str().unwrap(),
            "{field}"
        );
        schemas.push(attr(row, "data-source-schema").to_owned());
    }
    schemas
}

#[actix_web::test]
async fn the_console_shows_the_call_flow_and_traces_each_result_to_its_call_in_headless_chromium() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    // Capacity 10: the six single requests and four of the batch run today; the rest wait for Tuesday,
    // which gives the list and the schedule views something to show.
    let mut config = TestConfig::default();
    config
        .dispatching()
        .set("webhooks.allow_private_targets", true);
    config
        .demo_account()
        .insert("daily_call_capacity".into(), 10.into());
    let app = spawn_app_with(&config).await;
    let receiver = Receiver::start().await;
    let token = app.sandbox_token().await;

    let follow_up = create(
        &app,
        &token,
        json!({ "schemaId": SCHEMA, "inputs": claim_inputs("follow_up", 1), "internalId": "claim-0001",
                "internalTag": "denied-claims", "webhookUrl": receiver.url("/switchboard") }),
    )
    .await["requestId"]
        .as_str()
        .unwrap()
        .to_owned();
    let redial = create_scenario(&app, &token, "redial", 2).await;
    let mut others = Vec::new();
    for (n, scenario) in [
        "partial",
        "cannot_answer",
        "failure:PAYER_REFUSAL",
        "success",
    ]
    .into_iter()
    .enumerate()
    {
        others.push(create_scenario(&app, &token, scenario, n + 3).await);
    }
    let batch: Vec<Value> = (0..12)
        .map(|n| json!({ "schemaId": SCHEMA, "inputs": claim_inputs("success", 100 + n), "internalId": format!("batch-{n:03}") }))
        .collect();
    create(&app, &token, json!({ "requests": batch })).await;

    let follow_up_read = app.wait_terminal(&token, &follow_up).await;
    let redial_read = app.wait_terminal(&token, &redial).await;
    for id in &others {
        app.wait_terminal(&token, id).await;
    }
    receiver.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(follow_up_read["state"], "SUCCESS", "{follow_up_read}");
    assert_eq!(redial_read["state"], "SUCCESS", "{redial_read}");

    // Follow-up: two steps, the second opened by the first; every result traces to its call, step, schema.
    let run = dump_dom(&browser, &detail_url(&app, &follow_up, &token)).await;
    eprintln!("follow-up detail rendered and dumped in {:?}", run.elapsed);
    let dom = &run.stdout;
    let detail = elements(dom, "request-detail");
    assert_eq!(detail.len(), 1, "the detail view rendered: {dom}");
    assert_eq!(attr(&detail[0], "data-request-id"), follow_up);
    assert_eq!(attr(&detail[0], "data-state"), "SUCCESS");
    let steps = elements(dom, "step");
    let api_steps = follow_up_read["callSteps"].as_array().unwrap();
    assert_eq!(steps.len(), 2, "two steps: {steps:?}");
    for (shown, api) in steps.iter().zip(api_steps) {
        assert_eq!(attr(shown, "data-step-key"), api["key"].as_str().unwrap());
        assert_eq!(
            attr(shown, "data-step-schema"),
            api["schemaId"].as_str().unwrap()
        );
    }
    assert_eq!(attr(&steps[0], "data-triggered-by"), "");
    assert_eq!(
        attr(&steps[1], "data-triggered-by"),
        attr(&steps[0], "data-step-key"),
        "the second step is triggered by the first"
    );
    assert_eq!(
        elements(dom, "triggered-by").len(),
        1,
        "one triggered-by link is drawn"
    );
    let calls = elements(dom, "call");
    let api_calls = follow_up_read["contributingCalls"].as_array().unwrap();
    assert_eq!(calls.len(), api_calls.len());
    for (shown, api) in calls.iter().zip(api_calls) {
        assert_eq!(attr(shown, "data-call"), api["call"].to_string());
        assert_eq!(
            attr(shown, "data-call-step"),
            api["callStep"].as_str().unwrap()
        );
    }
    let schemas = assert_results_trace(dom, &follow_up_read);
    assert!(
        schemas.iter().any(|s| s == SCHEMA) && schemas.iter().any(|s| s == LEG),
        "{schemas:?}"
    );
    assert!(
        !elements(dom, "recording").is_empty(),
        "a playable recording"
    );
    assert!(
        dom.contains("127.0.0.1"),
        "recordings are re-based on the page's origin"
    );
    assert_eq!(elements(dom, "payer-lookup").len(), 1);
    assert_eq!(
        elements(dom, "webhook-attempt").len(),
        1,
        "the delivery attempt is listed"
    );

    // Redial: two calls sharing one step, grouped under it.
    let run = dump_dom(&browser, &detail_url(&app, &redial, &token)).await;
    eprintln!("redial detail rendered and dumped in {:?}", run.elapsed);
    let dom = &run.stdout;
    let steps = elements(dom, "step");
    assert_eq!(steps.len(), 1, "{steps:?}");
    let key = attr(&steps[0], "data-step-key").to_owned();
    let calls = elements(dom, "call");
    assert_eq!(calls.len(), 2, "{calls:?}");
    for (n, call) in calls.iter().enumerate() {
        assert_eq!(attr(call, "data-call"), (n + 1).to_string());
        assert_eq!(
            attr(call, "data-call-step"),
            key,
            "both calls in the one step"
        );
    }
    assert_eq!(
        elements(dom, "redial-group").len(),
        1,
        "the redial is grouped in its step"
    );
    assert_results_trace(dom, &redial_read);

    // A CANNOT ANSWER value is highlighted; a PARTIAL lists its missing fields; a FAILURE shows its error.
    let [partial, cannot_answer, failure, _] = &others[..] else {
        unreachable!()
    };
    let dom = dump_dom(&browser, &detail_url(&app, cannot_answer, &token))
        .await
        .stdout;
    assert_eq!(
        elements(&dom, "cannot-answer").len(),
        1,
        "one CANNOT ANSWER value is highlighted"
    );
    assert!(dom.contains(r#"class="row-cannot""#));
    let partial_read = app.wait_terminal(&token, partial).await;
    let dom = dump_dom(&browser, &detail_url(&app, partial, &token))
        .await
        .stdout;
    let missing: Vec<String> = elements(&dom, "missing-field")
        .iter()
        .map(|m| attr(m, "data-field").to_owned())
        .collect();
    let expected: Vec<String> = partial_read["missingFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_owned())
        .collect();
    assert!(!expected.is_empty(), "{partial_read}");
    assert_eq!(missing, expected, "the missing fields are listed");
    assert_eq!(
        elements(&dom, "step-error").len(),
        1,
        "the failed follow-up step shows its error"
    );
    let dom = dump_dom(&browser, &detail_url(&app, failure, &token))
        .await
        .stdout;
    assert_eq!(
        elements(&dom, "request-error").len(),
        1,
        "the FAILURE error object is shown"
    );
    assert!(dom.contains("PAYER_REFUSAL"));
    // No contributing calls on a FAILURE (2.6 rule 2): the attempt it made is drawn from attemptDetails.
    assert_eq!(
        elements(&dom, "call").len(),
        1,
        "the failed attempt is shown"
    );

    // The list shows the counts per state.
    let run = dump_dom(
        &browser,
        &format!("{}/console/#/requests?token={token}", app.address),
    )
    .await;
    eprintln!("request list rendered and dumped in {:?}", run.elapsed);
    let chips = elements(&run.stdout, "count-chip");
    let count = |state: &str| {
        chips
            .iter()
            .find(|c| attr(c, "data-state") == state)
            .map(|c| attr(c, "data-count").to_owned())
    };
    assert_eq!(count("ALL").as_deref(), Some("18"), "{chips:?}");
    assert_eq!(count("PROCESSING").as_deref(), Some("8"), "{chips:?}");
    assert_eq!(elements(&run.stdout, "request-row").len(), 18);

    // Screenshots for the docs.
    let detail = detail_url(&app, &follow_up, &token);
    screenshot(&browser, &detail, "console-request-detail.png", "1440,1100").await;
    // The whole page, down to the results table and the trace of each answer.
    screenshot(
        &browser,
        &detail,
        "console-request-detail-full.png",
        "1440,2000",
    )
    .await;
    let redial = detail_url(&app, &redial, &token);
    screenshot(&browser, &redial, "console-request-redial.png", "1440,1100").await;
    let list = format!("{}/console/#/requests?token={token}", app.address);
    screenshot(&browser, &list, "console-requests.png", "1440,1100").await;
    let schedule = format!("{}/console/#/schedule?token={token}", app.address);
    screenshot(&browser, &schedule, "console-schedule.png", "1440,760").await;
}

#[actix_web::test]
async fn the_request_list_shows_the_part_of_each_id_that_tells_requests_apart_with_hover_and_copy()
{
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let mut config = TestConfig::default();
    config.dispatching();
    let app = spawn_app_with(&config).await;
    let token = app.sandbox_token().await;
    // Single requests created together share their time prefix and their batch place (`0001`); members of
    // one batch share everything but their place.
    let mut ids = Vec::new();
    for n in 0..4 {
        ids.push(create_scenario(&app, &token, "stuck", n).await);
    }
    let batch: Vec<Value> = (0..3)
        .map(|n| json!({ "schemaId": SCHEMA, "inputs": claim_inputs("stuck", 10 + n) }))
        .collect();
    let created = create(&app, &token, json!({ "requests": batch })).await;
    for entry in created["requests"].as_array().unwrap() {
        ids.push(entry["requestId"].as_str().unwrap().to_owned());
    }

    let dom = dump_dom(
        &browser,
        &format!("{}/console/#/requests?token={token}", app.address),
    )
    .await
    .stdout;

    let mut shown = Vec::new();
    for id in &ids {
        let link = Regex::new(&format!(
            r##"<a href="#/requests/{id}"[^>]*title="([^"]*)"[^>]*>([^<]*)</a>"##
        ))
        .unwrap();
        let captures = link
            .captures(&dom)
            .unwrap_or_else(|| panic!("no link to {id} in the list: {dom}"));
        assert_eq!(&captures[1], id, "the whole id on hover");
        shown.push(captures[2].to_owned());
    }
    let distinct: std::collections::BTreeSet<&String> = shown.iter().collect();
    assert_eq!(
        distinct.len(),
        ids.len(),
        "every request reads differently in the list: {shown:?} for {ids:?}"
    );
    for (text, id) in shown.iter().zip(&ids) {
        let part = text.trim_start_matches('…');
        assert!(
            part.len() >= 8 && part.len() < id.len() && id.ends_with(part),
            "{text:?} is the distinguishing end of {id}"
        );
    }
    let mut copies: Vec<String> = elements(&dom, "copy-id")
        .iter()
        .map(|button| attr(button, "data-copy").to_owned())
        .collect();
    copies.sort();
    let mut expected = ids.clone();
    expected.sort();
    assert_eq!(
        copies, expected,
        "one copy button per row, with its whole id"
    );
}
