//! `[[accounts]] dialer`: one account's production calls go through Retell while another account stays
//! on `[dialer] kind` (the simulator), both on one server.

use crate::fakes::retell::{FakeRetell, Scenario};
use crate::helpers::{spawn_app_with, TestConfig};
use crate::voice_retell::{create, retell_config};

const CLINIC_KEY: &str = "sk_live_clinic_5Tn2q8WmR3";
const CLINIC_SECRET: &str = "clinic-live-secret";

#[actix_web::test]
async fn one_account_calls_through_retell_while_another_stays_on_the_simulator() {
    let fake = FakeRetell::start().await;
    fake.force(&[Scenario::Answered]);
    let mut config = TestConfig::default();
    retell_config(&mut config, &fake);
    config.set("dialer.kind", "simulated");
    config
        .demo_account()
        .insert("dialer".into(), "retell".into());
    config.push(
        "accounts",
        &format!(
            r#"id = "clinic"
daily_call_capacity = 50
timezone = "America/New_York"
schemas = ["vob-basic"]
credentials = [{{ environment = "production", key = "{CLINIC_KEY}", secret = "{CLINIC_SECRET}" }}]"#
        ),
    );
    let app = spawn_app_with(&config).await;
    fake.deliver_to(&app.address);

    let demo = app.live_token().await;
    let on_retell = create(&app, &demo).await;
    let done = app.wait_terminal(&demo, &on_retell).await;
    assert_eq!(done["state"], "SUCCESS", "{done}");
    assert_eq!(
        fake.creates().len(),
        1,
        "the demo account's call goes to Retell"
    );

    let clinic = app.api.token(CLINIC_KEY, CLINIC_SECRET).await;
    let simulated = create(&app, &clinic).await;
    let done = app.wait_terminal(&clinic, &simulated).await;
    assert_ne!(done["state"], "PROCESSING", "{done}");
    assert_eq!(
        fake.creates().len(),
        1,
        "the clinic's call stays on the simulator, never on Retell"
    );
}
