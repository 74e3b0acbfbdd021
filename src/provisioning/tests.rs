//! The fingerprint that decides whether a declaration is applied again at start, and an upgrade from a
//! release whose fingerprint covered less.

use super::fingerprint::{account_fingerprint, Covered};
use super::*;

fn declared(toml_text: &str) -> AccountSpec {
    toml::from_str(&format!(
        "id = \"acme\"\ndaily_call_capacity = 10\n{toml_text}"
    ))
    .unwrap()
}

#[test]
fn every_declared_setting_of_an_account_moves_its_fingerprint() {
    let plain = account_fingerprint(&declared(""), Covered::All);
    let edits = [
        "name = \"Acme Health\"",
        "timezone = \"America/Chicago\"",
        "webhook_url = \"https://hooks.example.com/sb\"",
        "webhook_secret = \"whsec\"",
        "features = [\"electronic_channels\"]",
        "schemas = [\"vob-basic\"]",
        "credentials = []",
        "credentials = [{ environment = \"sandbox\", key = \"sk_test_a\", secret = \"s\" }]",
        "phone_book = [{ payer = \"Aetna\", phone = \"8005550123\" }]",
        "provider_name = \"Acme Clinic\"",
        "retention_days = 30",
        "dialer = \"retell\"",
    ];
    for edit in edits {
        // Declarations refuse unknown keys, so each edit is a real setting.
        assert_ne!(
            account_fingerprint(&declared(edit), Covered::All),
            plain,
            "{edit} is not in the fingerprint"
        );
    }
    let mut capacity = declared("");
    capacity.daily_call_capacity = 11;
    assert_ne!(account_fingerprint(&capacity, Covered::All), plain);
}

#[test]
fn a_changed_retention_or_provider_name_moves_the_fingerprint_again() {
    assert_ne!(
        account_fingerprint(&declared("retention_days = 30"), Covered::All),
        account_fingerprint(&declared("retention_days = 7"), Covered::All)
    );
    assert_ne!(
        account_fingerprint(&declared("provider_name = \"A\""), Covered::All),
        account_fingerprint(&declared("provider_name = \"B\""), Covered::All)
    );
}

#[test]
fn the_earlier_fingerprint_is_the_one_earlier_releases_wrote() {
    // Those releases covered neither setting: an entry declaring them had the fingerprint of one without.
    let with = declared("retention_days = 30\nprovider_name = \"Acme Clinic\"\ncredentials = []");
    let without = declared("credentials = []");
    assert_eq!(
        account_fingerprint(&with, Covered::BeforeRetention),
        account_fingerprint(&declared(""), Covered::All)
    );
    assert_eq!(
        account_fingerprint(&without, Covered::BeforeRetention),
        account_fingerprint(&declared(""), Covered::All)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upgrade_applies_only_the_settings_earlier_releases_kept_out_and_keeps_admin_changes() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&switchboard_storage::StorageConfig::embedded(dir.path())).unwrap();
    let now = "2026-11-23T14:00:00Z".parse().unwrap();
    let overrides = crate::configuration::Overrides::default();
    let file =
        "[[accounts]]\nid = \"acme\"\ndaily_call_capacity = 10\nprovider_name = \"Acme Clinic\"\n";
    let mut settings = crate::configuration::from_toml_str(file, "test.toml", &overrides).unwrap();
    provision(&store, &settings, now).await.unwrap();
    let id = settings.accounts[0].id.clone().unwrap();
    // Changed through the admin API since.
    let mut edited = store.account(&id).await.unwrap().unwrap();
    edited.daily_call_capacity += 7;
    store.put_account(&edited, &[]).await.unwrap();
    // The file now declares retention, and the store holds what an earlier release wrote for that file.
    settings.accounts[0].retention_days = Some(30);
    let key = format!("account:{id}");
    let earlier = account_fingerprint(&settings.accounts[0], Covered::BeforeRetention);
    store
        .set_provisioned_fingerprint(&key, &earlier)
        .await
        .unwrap();

    provision(&store, &settings, now).await.unwrap();

    let after = store.account(&id).await.unwrap().unwrap();
    assert_eq!(
        after.retention_days,
        Some(30),
        "the setting kept out is applied"
    );
    assert_eq!(
        after.daily_call_capacity, edited.daily_call_capacity,
        "the admin change stands"
    );
    let current = account_fingerprint(&settings.accounts[0], Covered::All);
    assert_eq!(
        store.provisioned_fingerprint(&key).await.unwrap(),
        Some(current)
    );

    // From then on the entry is unchanged: another admin change stands through a restart.
    let mut again = after.clone();
    again.retention_days = Some(90);
    store.put_account(&again, &[]).await.unwrap();
    provision(&store, &settings, now).await.unwrap();
    assert_eq!(
        store.account(&id).await.unwrap().unwrap().retention_days,
        Some(90)
    );
}
