//! The fingerprint that decides whether a declaration is applied again at start.

use super::*;

fn declared(toml_text: &str) -> AccountSpec {
    toml::from_str(&format!(
        "id = \"acme\"\ndaily_call_capacity = 10\n{toml_text}"
    ))
    .unwrap()
}

#[test]
fn every_declared_setting_of_an_account_moves_its_fingerprint() {
    let plain = account_fingerprint(&declared(""));
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
            account_fingerprint(&declared(edit)),
            plain,
            "{edit} is not in the fingerprint"
        );
    }
    let mut capacity = declared("");
    capacity.daily_call_capacity = 11;
    assert_ne!(account_fingerprint(&capacity), plain);
}

#[test]
fn a_changed_retention_or_provider_name_moves_the_fingerprint_again() {
    assert_ne!(
        account_fingerprint(&declared("retention_days = 30")),
        account_fingerprint(&declared("retention_days = 7"))
    );
    assert_ne!(
        account_fingerprint(&declared("provider_name = \"A\"")),
        account_fingerprint(&declared("provider_name = \"B\""))
    );
}
