//! Measurements of real-call throughput and crash safety against the fake Retell, run by
//! `scripts/bench-voice.sh` (ignored in the normal test run: they take minutes and print figures).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::fakes::retell::FakeRetell;
use crate::helpers::{client, status_and_json, write_config, BinaryServer, TestConfig};
use crate::voice_retell::retell_config;

fn config(dir: &std::path::Path, fake: &FakeRetell, max_concurrent: usize) -> std::path::PathBuf {
    let mut config = TestConfig::default();
    retell_config(&mut config, fake);
    config
        .set("dialer.max_concurrent_calls", max_concurrent as i64)
        .set("dialer.poll_interval_s", 5);
    config
        .demo_account()
        .insert("daily_call_capacity".into(), 5000.into());
    write_config(dir, &config)
}

/// Creates `count` production requests in batches of 100 (distinct member ids, so distinct calls).
async fn create_all(
    client: &reqwest::Client,
    server: &BinaryServer,
    token: &str,
    count: usize,
) -> Vec<String> {
    let mut ids = Vec::new();
    for chunk in (0..count).collect::<Vec<_>>().chunks(100) {
        let requests: Vec<Value> = chunk
            .iter()
            .map(|i| json!({
                "schemaId": "vob-basic",
                "inputs": {
                    "payerName": "Aetna", "phoneNumber": "(800) 555-0123", "memberId": format!("W{:09}", 100_000_000 + i),
                    "patientFirstName": "Ann", "patientLastName": "Lee", "patientDateOfBirth": "1980-01-02",
                    "billingProviderNpi": "1234567890"
                }
            }))
            .collect();
        let response = client
            .post(server.url("/v1/requests"))
            .bearer_auth(token)
            .json(&json!({ "requests": requests }))
            .send()
            .await
            .unwrap();
        let (status, body) = status_and_json(response).await;
        assert_eq!(status, 200, "{body}");
        ids.extend(
            body["requests"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["requestId"].as_str().unwrap().to_owned()),
        );
    }
    ids
}

async fn finished(client: &reqwest::Client, server: &BinaryServer) -> f64 {
    let Ok(response) = client.get(server.url("/metrics")).send().await else {
        return 0.0;
    };
    let text = response.text().await.unwrap_or_default();
    text.lines()
        .filter(|l| l.starts_with("switchboard_requests_finished_total{"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

fn rss_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

async fn run(max_concurrent: usize, requests: usize) {
    let fake = FakeRetell::start().await;
    fake.set_call_length(Duration::from_millis(200));
    let (config_dir, data_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let config = config(config_dir.path(), &fake, max_concurrent);
    let client = client();
    let server = BinaryServer::start_ready(&config, data_dir.path()).await;
    fake.deliver_to(&server.url(""));
    let token = server.live_token().await;
    let started = Instant::now();
    create_all(&client, &server, &token, requests).await;
    let created = started.elapsed();
    let mut peak_rss = 0;
    let mut first_create = None;
    while finished(&client, &server).await < requests as f64 {
        if first_create.is_none() && !fake.creates().is_empty() {
            first_create = Some(started.elapsed());
        }
        peak_rss = peak_rss.max(rss_kib(server.pid()).0);
        assert!(
            started.elapsed() < Duration::from_secs(900),
            "not all terminal after 15 min"
        );
        actix_web::rt::time::sleep(Duration::from_millis(200)).await;
    }
    let all_terminal = started.elapsed();
    let creates = fake.creates().len();
    let placing = all_terminal - first_create.unwrap_or_default();
    let (_, hwm) = rss_kib(server.pid());
    println!(
        "BENCH max_concurrent_calls={max_concurrent} requests={requests} creates={creates} \
         created_in={:.1}s all_terminal={:.1}s calls_per_s={:.1} peak_rss_mib={:.1} hwm_mib={:.1}",
        created.as_secs_f64(),
        all_terminal.as_secs_f64(),
        creates as f64 / placing.as_secs_f64(),
        peak_rss as f64 / 1024.0,
        hwm as f64 / 1024.0,
    );
    assert_eq!(server.terminate(), Some(0));
}

#[actix_web::test]
#[ignore = "measurement: run by scripts/bench-voice.sh"]
async fn bench_1000_requests_at_20_concurrent_calls() {
    run(20, 1000).await;
}

#[actix_web::test]
#[ignore = "measurement: run by scripts/bench-voice.sh"]
async fn bench_1000_requests_at_200_concurrent_calls() {
    run(200, 1000).await;
}

#[actix_web::test]
#[ignore = "measurement: run by scripts/bench-voice.sh"]
async fn bench_creates_per_attempt_across_five_kill_9s() {
    let fake = FakeRetell::start().await;
    fake.set_call_length(Duration::from_millis(1500));
    let (config_dir, data_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let config = config(config_dir.path(), &fake, 20);
    let client = client();
    let mut server = BinaryServer::start_ready(&config, data_dir.path()).await;
    fake.deliver_to(&server.url(""));
    let token = server.live_token().await;
    let requests = 200;
    let ids = create_all(&client, &server, &token, requests).await;
    for kill in 1..=5 {
        actix_web::rt::time::sleep(Duration::from_millis(1200)).await;
        server.kill_hard();
        println!("kill -9 #{kill}: {} creates so far", fake.creates().len());
        server = BinaryServer::start_ready(&config, data_dir.path()).await;
        fake.deliver_to(&server.url(""));
    }
    let deadline = Instant::now() + Duration::from_secs(600);
    let token = server.live_token().await;
    let mut attempts = 0;
    let mut pending = Vec::new();
    // Every request terminal; count Switchboard's attempts from the reads.
    for id in &ids {
        loop {
            let (_, read) = status_and_json(
                client
                    .get(server.url(&format!("/v1/requests/{id}")))
                    .bearer_auth(&token)
                    .send()
                    .await
                    .unwrap(),
            )
            .await;
            if read["state"] != "PROCESSING" {
                attempts += read["attemptDetails"].as_array().map_or(0, Vec::len);
                break;
            }
            if Instant::now() > deadline {
                pending.push(id.clone());
                break;
            }
            actix_web::rt::time::sleep(Duration::from_millis(200)).await;
        }
    }
    let creates = fake.creates();
    let mut per_call: HashMap<String, usize> = HashMap::new();
    for create in &creates {
        *per_call
            .entry(
                create["metadata"]["switchboard_call_id"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            )
            .or_default() += 1;
    }
    let max = per_call.values().copied().max().unwrap_or(0);
    println!(
        "BENCH kill9 requests={requests} attempts={attempts} creates={} distinct_calls={} max_creates_per_attempt={max} pending={}",
        creates.len(),
        per_call.len(),
        pending.len()
    );
    assert!(pending.is_empty(), "requests not terminal: {pending:?}");
    assert_eq!(max, 1, "an attempt was created twice at the platform");
    assert_eq!(
        per_call.len(),
        attempts,
        "every attempt reached the platform exactly once"
    );
    assert_eq!(server.terminate(), Some(0));
}
