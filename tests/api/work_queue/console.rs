//! The console's work queue in headless Chromium: a caller opens a task from a signed-in link, claims it,
//! fills the form built from its questions, completes it, and the request reads `SUCCESS` with their call.
//!
//! Chromium is driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`: commands on fd 3,
//! answers on fd 4, each JSON message ended by a NUL byte), which a shell maps onto the child's stdin and
//! stdout, so the test needs no WebSocket client. The page is only clicked and typed into, through DOM
//! events, as a person would. Without Chromium the test fails outside CI unless
//! `SWITCHBOARD_SKIP_BROWSER=1`, like the console's other browser test.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{json, Value};

use super::{call, config, task_of};
use crate::helpers::{spawn_app_with, ADMIN_TOKEN};
use crate::operators::operator;

fn chromium() -> Option<String> {
    for candidate in ["/usr/bin/chromium", "/usr/bin/chromium-browser"] {
        if std::path::Path::new(candidate).exists() {
            return Some(candidate.to_owned());
        }
    }
    if std::env::var("SWITCHBOARD_SKIP_BROWSER").as_deref() == Ok("1")
        && std::env::var_os("CI").is_none()
    {
        eprintln!("skipping the work queue browser test (SWITCHBOARD_SKIP_BROWSER=1)");
        return None;
    }
    panic!("headless Chromium was not found: apt-get install -y chromium (or SWITCHBOARD_SKIP_BROWSER=1 outside CI)");
}

/// One Chromium under the DevTools protocol, with one page attached.
struct Devtools {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    next_id: u64,
    session: Option<String>,
    _profile: tempfile::TempDir,
}

impl Devtools {
    fn start(browser: &str) -> Devtools {
        let profile = tempfile::tempdir().unwrap();
        let script = format!(
            "exec '{browser}' --headless --no-sandbox --disable-gpu --no-first-run \
             --disable-background-networking --disable-component-update --disable-sync \
             --disable-dev-shm-usage --remote-debugging-pipe --user-data-dir='{}' 3<&0 4>&1 1>&2",
            profile.path().display()
        );
        let mut child = Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromium starts");
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        Devtools {
            child,
            input,
            output,
            next_id: 0,
            session: None,
            _profile: profile,
        }
    }

    /// Sends `method` and answers its result (events in between are skipped).
    fn send(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = &self.session {
            message["sessionId"] = json!(session);
        }
        let mut bytes = serde_json::to_vec(&message).unwrap();
        bytes.push(0);
        self.input.write_all(&bytes).unwrap();
        self.input.flush().unwrap();
        loop {
            let mut raw = Vec::new();
            let read = self.output.read_until(0, &mut raw).unwrap();
            assert!(read > 0, "chromium closed the pipe");
            raw.pop();
            let answer: Value = serde_json::from_slice(&raw).unwrap();
            if answer["id"] == id {
                assert!(answer.get("error").is_none(), "{method}: {answer}");
                return answer["result"].clone();
            }
        }
    }

    fn open(&mut self, url: &str) {
        let target = self.send("Target.createTarget", json!({"url": "about:blank"}));
        let attached = self.send(
            "Target.attachToTarget",
            json!({"targetId": target["targetId"], "flatten": true}),
        );
        self.session = Some(attached["sessionId"].as_str().unwrap().to_owned());
        self.send("Page.navigate", json!({"url": url}));
    }

    /// Evaluates `expression` in the page and answers its value.
    fn eval(&mut self, expression: &str) -> Value {
        let result = self.send(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
        );
        result["result"]["value"].clone()
    }

    /// Waits until `expression` is true in the page.
    fn wait_for(&mut self, expression: &str, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if self.eval(expression) == json!(true) {
                return;
            }
            if Instant::now() > deadline {
                let text = self.eval("document.body ? document.body.innerText : ''");
                panic!("the page never showed {what}: {text}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Devtools {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Fills every question of the form with a value its type takes, as a person picking and typing would: the
/// unconditional ones, then each conditional one whose condition those answers meet.
const FILL: &str = r#"(() => {
  const given = {};
  const fill = (field) => {
    const input = field.querySelector('select, input:not([type=checkbox])');
    let value = 'REF-123';
    if (input.tagName === 'SELECT') value = input.options[1].value;
    else if (input.type === 'date') value = '2026-11-20';
    else if (input.inputMode === 'decimal') value = '125.00';
    input.value = value;
    input.dispatchEvent(new Event('input', { bubbles: true }));
    input.dispatchEvent(new Event('change', { bubbles: true }));
    given[field.dataset.question] = value;
  };
  const fields = [...document.querySelectorAll('[data-question]')];
  fields.filter((f) => !f.dataset.whenField).forEach(fill);
  fields.filter((f) => f.dataset.whenField)
    .filter((f) => String(given[f.dataset.whenField] || '').toLowerCase() === f.dataset.whenEquals.toLowerCase())
    .forEach(fill);
  const notes = document.querySelector('[data-testid=call-notes]');
  notes.value = 'Reached provider services by phone.';
  notes.dispatchEvent(new Event('input', { bubbles: true }));
  return document.querySelectorAll('[data-question]').length;
})()"#;

#[actix_web::test]
async fn a_person_claims_fills_and_completes_a_task_in_the_console() {
    let Some(browser) = chromium() else {
        return;
    };
    let app = spawn_app_with(&config(true)).await;
    let (token, id, task) = task_of(&app, "failure:IVR_FAILURE").await;
    let casey = operator(&app, "casey", "caller").await;
    let url = format!(
        "{}/console/#/queue/{}?operator={casey}",
        app.url(""),
        task["taskId"].as_str().unwrap()
    );
    let filled = actix_web::rt::task::spawn_blocking(move || {
        let mut devtools = Devtools::start(&browser);
        devtools.open(&url);
        devtools.wait_for(
            "!!document.querySelector('[data-testid=claim]')",
            "the claim button",
        );
        devtools.eval("document.querySelector('[data-testid=claim]').click()");
        devtools.wait_for(
            "document.querySelector('[data-testid=task-state]')?.textContent === 'claimed'",
            "the task claimed",
        );
        let filled = devtools.eval(FILL);
        devtools.eval("document.querySelector('[data-testid=complete]').click()");
        devtools.wait_for(
            "!!document.querySelector('[data-testid=task-done]')",
            "the task done",
        );
        filled
    })
    .await
    .unwrap();
    assert!(filled.as_u64().unwrap() > 0, "the form has questions");

    let ended = app.wait_terminal(&token, &id).await;
    assert_eq!(ended["state"], "SUCCESS", "{ended}");
    let person = ended["contributingCalls"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(
        person["placedBy"],
        json!({"kind": "operator", "name": "casey"})
    );
    assert_eq!(person["callSummary"], "Reached provider services by phone.");
    let (_, read) = call(
        &app,
        Method::GET,
        &format!("/admin/v1/tasks/{}", task["taskId"].as_str().unwrap()),
        ADMIN_TOKEN,
        None,
    )
    .await;
    assert_eq!(read["state"], "done");
}
