//! `payer_notes` (operator contract §11): each platform call carries, as a prompt variable, what was
//! learned of its payer's line; empty before anything was.

use crate::fakes::retell::{FakeRetell, Scenario};
use crate::voice_retell::{app_with_retell, create};

#[actix_web::test]
async fn a_retell_call_is_told_what_was_learned_of_the_payers_line() {
    let fake = FakeRetell::start().await;
    fake.force(&[Scenario::Answered, Scenario::Answered]);
    let app = app_with_retell(&fake, |_| {}).await;
    let token = app.live_token().await;
    let first = create(&app, &token).await;
    app.wait_terminal(&token, &first).await;
    let notes = |n: usize| fake.creates()[n]["retell_llm_dynamic_variables"]["payer_notes"].clone();
    assert_eq!(notes(0), "", "nothing learned before the first call");

    // What is learned is read again once an hour of the clock has passed.
    app.advance_clock(3600).await;
    let token = app.live_token().await;
    let second = create(&app, &token).await;
    app.wait_terminal(&token, &second).await;
    let told = notes(1);
    let told = told.as_str().unwrap();
    assert!(
        told.starts_with("Aetna, last 90 days: 1 call, 100% reached a representative."),
        "{told}"
    );
    assert!(told.contains("Mon 10:00 payer's time"), "{told}");
}
