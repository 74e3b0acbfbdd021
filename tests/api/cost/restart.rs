//! `switchboard_cost_usd_total` across a `kill -9`: a request finished before the crash is not counted
//! again by the process that resumes the running ones, and the request whose call was live during the
//! crash is counted once, at the one price of its one call.

use std::time::Duration;

use super::{cost_metric, scrape, wait_cost_metric};
use crate::fakes::retell::{FakeRetell, Pricing, Scenario};
use crate::helpers::{create_vob, write_config, BinaryServer, TestConfig};
use crate::voice_retell::{retell_config, wait_platform_call};

#[actix_web::test]
async fn a_restart_resumes_running_requests_without_counting_any_cost_twice() {
    let fake = FakeRetell::start().await;
    fake.price_calls(Pricing::Combined(156.4));
    fake.force(&[Scenario::Answered, Scenario::Answered]);
    let (config_dir, data_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut config = TestConfig::default();
    retell_config(&mut config, &fake);
    let config = write_config(config_dir.path(), &config);

    let server = BinaryServer::start_ready(&config, data_dir.path()).await;
    fake.deliver_to(&server.url(""));
    let token = server.live_token().await;
    let finished = create_vob(&server, &token).await;
    let finished_read = server.wait_terminal(&token, &finished).await;
    assert_eq!(finished_read["cost"]["calls"], "1.56", "{finished_read}");
    wait_cost_metric(&server, "call", 1.56).await;

    fake.hold_calls(true);
    let running = create_vob(&server, &token).await;
    let created = fake.wait_creates(2).await;
    wait_platform_call(&fake, &created[1]).await;
    // The platform's id is stored before anything waits on it; give the flush a moment, then crash.
    actix_web::rt::time::sleep(Duration::from_millis(300)).await;
    server.kill_hard();

    let server = BinaryServer::start_ready(&config, data_dir.path()).await;
    fake.deliver_to(&server.url(""));
    assert_eq!(
        cost_metric(&scrape(&server).await, "call"),
        0.0,
        "resuming counts nothing: the finished request was counted by the process that finished it"
    );
    fake.release_calls();
    let done = server
        .wait_terminal_within(&token, &running, Duration::from_secs(30))
        .await;
    assert_eq!(done["state"], "SUCCESS", "{done}");
    assert_eq!(fake.creates().len(), 2, "no second call was placed");
    assert_eq!(done["cost"]["calls"], "1.56", "{done}");
    wait_cost_metric(&server, "call", 1.56).await;
    assert_eq!(
        server.read_request(&token, &finished).await["cost"],
        finished_read["cost"],
        "a finished request's cost is stored with it"
    );
    assert_eq!(server.terminate(), Some(0));
}
