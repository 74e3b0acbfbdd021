//! An account created through the admin API without a `webhook_secret` gets one of its own, shown once in
//! the 201, and its production webhooks are signed with it rather than with its API key, which its clients
//! hold (issue 43). Accounts of the configuration file that set none keep the key (tests in `webhooks`).

use std::time::Duration;

use hmac::{Hmac, Mac};
use reqwest::Method;
use serde_json::{json, Value};
use sha2::Sha256;

use crate::helpers::{spawn_app_with, status_and_json, TestConfig};
use crate::receiver::Receiver;

const KEY: &str = "sk_live_fresh_1";
const SECRET: &str = "fresh-live-secret-1";

fn hmac_hex(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

#[actix_web::test]
async fn an_account_created_without_a_webhook_secret_gets_one_shown_once_that_signs_its_webhooks() {
    let receiver = Receiver::start().await;
    let mut config = TestConfig::default();
    config
        .dispatching()
        .set("webhooks.allow_private_targets", true);
    let app = spawn_app_with(&config).await;
    let account = json!({
        "daily_call_capacity": 10,
        "schemas": ["vob-basic"],
        "webhook_url": receiver.url("/hook"),
        "credentials": [{ "environment": "production", "key": KEY, "secret": SECRET }],
    });
    let put = || {
        app.admin(
            Method::PUT,
            "/admin/v1/accounts/fresh",
            Some(account.clone()),
        )
    };

    let (status, created) = status_and_json(put().await).await;
    assert_eq!(status, 201, "{created}");
    let generated = created["webhook_secret"]
        .as_str()
        .unwrap_or_else(|| panic!("the 201 shows the generated secret: {created}"))
        .to_owned();
    assert!(
        generated.starts_with("whsec_") && generated.len() == 46,
        "{generated}"
    );
    assert_eq!(created["webhook_secret_set"], true);

    // Never shown again: not by a read, a list, or a replace (which keeps it).
    let (status, replaced) = status_and_json(put().await).await;
    assert_eq!(status, 200, "{replaced}");
    assert_eq!(replaced["webhook_secret_set"], true, "{replaced}");
    for path in ["/admin/v1/accounts/fresh", "/admin/v1/accounts"] {
        let text = app
            .admin(Method::GET, path, None)
            .await
            .text()
            .await
            .unwrap();
        assert!(
            !text.contains(&generated),
            "{path} shows the secret: {text}"
        );
    }
    assert!(replaced.get("webhook_secret").is_none(), "{replaced}");
    assert!(!replaced.to_string().contains(&generated));

    let token = app.api.token(KEY, SECRET).await;
    let item = json!({
        "schemaId": "vob-basic",
        "inputs": {
            "payerName": "Aetna", "phoneNumber": "(800) 555-0123", "memberId": "W123456789",
            "patientFirstName": "Ann", "patientLastName": "Lee", "patientDateOfBirth": "1980-01-02",
            "billingProviderNpi": "1234567890"
        }
    });
    let id = app.api.create_request(&token, &item).await;
    let webhooks = receiver.wait_for(1, Duration::from_secs(20)).await;
    let webhook = &webhooks[0];
    let body: Value = serde_json::from_slice(&webhook.body).unwrap();
    assert_eq!(body["requestId"], id.as_str());
    let signature = webhook.header("x-webhook-signature").unwrap();
    assert_eq!(
        signature,
        hmac_hex(&generated, &webhook.body),
        "signed with the generated secret"
    );
    assert_ne!(
        signature,
        hmac_hex(KEY, &webhook.body),
        "not with the API key"
    );
}

#[actix_web::test]
async fn an_account_created_with_a_webhook_secret_keeps_it_and_shows_none() {
    let app = spawn_app_with(&TestConfig::default()).await;
    let account = json!({
        "daily_call_capacity": 10,
        "webhook_secret": "whsec_chosen_by_the_operator",
    });
    let (status, created) = status_and_json(
        app.admin(Method::PUT, "/admin/v1/accounts/chosen", Some(account))
            .await,
    )
    .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["webhook_secret_set"], true);
    assert!(created.get("webhook_secret").is_none(), "{created}");
}
