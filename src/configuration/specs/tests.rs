//! Unit tests of the operator specs: each validation rule of accounts, schemas and payers.

use super::*;

fn schema(toml_text: &str) -> SchemaSpec {
    toml::from_str(toml_text).unwrap()
}

const BASE: &str = r#"
    id = "s"
    request_type = "claim-status"
    required_inputs = ["payerName"]
    [[fields]]
    name = "claimStatus"
    label = "Claim status"
    description = "What is the status?"
    type = "multiple"
    allowed_values = ["PAID", "DENIED"]
    required = true
"#;

#[test]
fn a_well_formed_schema_validates() {
    schema(BASE).validate().unwrap();
}

#[test]
fn schema_rules_name_the_offending_key() {
    let cases = [
        (
            BASE.replace("allowed_values = [\"PAID\", \"DENIED\"]", ""),
            "fields[0].allowed_values",
        ),
        (
            BASE.replace("type = \"multiple\"", "type = \"date\""),
            "fields[0].allowed_values",
        ),
        (BASE.replace("id = \"s\"", "id = \"_s\""), "id"),
        (
            BASE.replace("request_type = \"claim-status\"", "request_type = \" \""),
            "request_type",
        ),
        (
            BASE.replace(
                "required_inputs = [\"payerName\"]",
                "required_inputs = [\"payerName\"]\noptional_inputs = [\"payerName\"]",
            ),
            "optional_inputs[0]",
        ),
        (
            format!("{BASE}\nwhen = {{ field = \"nope\", equals = \"x\" }}"),
            "fields[0].when.field",
        ),
        (
            format!("{BASE}\nwhen = {{ field = \"claimStatus\", equals = \"x\" }}"),
            "fields[0].when.field",
        ),
        (
            BASE.replace("id = \"s\"", "id = \"s\"\nfollow_up = \"s\""),
            "follow_up",
        ),
    ];
    for (text, key) in cases {
        let err = schema(&text).validate().unwrap_err();
        assert_eq!(err.key, key, "{text}\n{err}");
    }
}

#[test]
fn a_schema_without_fields_is_refused() {
    let text = "id = \"s\"\nrequest_type = \"x\"";
    assert_eq!(schema(text).validate().unwrap_err().key, "fields");
}

#[test]
fn a_required_conditional_field_is_refused() {
    let text = format!(
        "{BASE}\n[[fields]]\nname = \"denial\"\nlabel = \"D\"\ndescription = \"Why?\"\ntype = \"alphanumeric\"\nrequired = true\nwhen = {{ field = \"claimStatus\", equals = \"DENIED\" }}"
    );
    assert_eq!(
        schema(&text).validate().unwrap_err().key,
        "fields[1].required"
    );
}

#[test]
fn unknown_keys_are_a_parse_error() {
    assert!(toml::from_str::<SchemaSpec>(&format!("{BASE}\nlabell = \"x\"")).is_err());
}

fn account(extra: &str) -> AccountSpec {
    toml::from_str(&format!("id = \"acme\"\ndaily_call_capacity = 5\n{extra}")).unwrap()
}

#[test]
fn account_rules_name_the_offending_key() {
    let cases = [
        ("timezone = \"Mars/Olympus\"", "timezone"),
        ("webhook_url = \"ftp://x\"", "webhook_url"),
        ("webhook_url = \"not a url\"", "webhook_url"),
        ("[[credentials]]\nenvironment = \"sandbox\"\nkey = \"has space\"\nsecret = \"s\"", "credentials[0].key"),
        ("[[credentials]]\nenvironment = \"sandbox\"\nkey = \"k\"\nsecret = \"\"", "credentials[0].secret"),
        (
            "[[credentials]]\nenvironment = \"sandbox\"\nkey = \"k\"\nsecret = \"s\"\n[[credentials]]\nenvironment = \"production\"\nkey = \"k\"\nsecret = \"t\"",
            "credentials[1].key",
        ),
        ("[[phone_book]]\npayer = \"Aetna\"\nphone = \"123\"", "phone_book[0].phone"),
    ];
    for (extra, key) in cases {
        assert_eq!(account(extra).validate().unwrap_err().key, key, "{extra}");
    }
    account("timezone = \"America/Chicago\"")
        .validate()
        .unwrap();
}

#[test]
fn unknown_features_do_not_parse() {
    assert!(
        toml::from_str::<AccountSpec>("daily_call_capacity = 1\nfeatures = [\"teleport\"]")
            .is_err()
    );
}

#[test]
fn payer_rules_name_the_offending_key() {
    let payer =
        |extra: &str| toml::from_str::<PayerSpec>(&format!("name = \"Aetna\"\n{extra}")).unwrap();
    payer("phone = \"8005550100\"\nmember_id_prefixes = [\"A2B\"]")
        .validate()
        .unwrap();
    assert_eq!(
        payer("phone = \"0005550100\"").validate().unwrap_err().key,
        "phone"
    );
    assert_eq!(
        payer("member_id_prefixes = [\"a1b\"]")
            .validate()
            .unwrap_err()
            .key,
        "member_id_prefixes[0]"
    );
}
