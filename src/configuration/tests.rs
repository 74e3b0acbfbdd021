//! Loading the configuration: layers, overrides and errors.

#[test]
fn the_otlp_endpoint_env_variable_wins_over_the_file_and_either_must_be_http() {
    use super::raw::RawTelemetry;
    use super::telemetry::{TelemetryEnv, TelemetrySettings};
    let file = || RawTelemetry {
        otlp_endpoint: Some("http://collector.internal:4318/".into()),
        ca_file: None,
        service_name: Some("sb".into()),
    };
    let url = |settings: &TelemetrySettings| settings.traces_url.as_ref().map(|u| u.to_string());
    let no_env = TelemetryEnv::default();
    let from_file = TelemetrySettings::validate(file(), &no_env).unwrap();
    assert_eq!(
        url(&from_file).as_deref(),
        Some("http://collector.internal:4318/v1/traces")
    );
    assert_eq!(from_file.service_name, "sb");
    let env = |endpoint: &str| TelemetryEnv {
        endpoint: Some(endpoint.into()),
        certificate: None,
    };
    let from_env = TelemetrySettings::validate(file(), &env("http://127.0.0.1:4318")).unwrap();
    assert_eq!(
        url(&from_env).as_deref(),
        Some("http://127.0.0.1:4318/v1/traces")
    );
    let off = TelemetrySettings::validate(RawTelemetry::default(), &no_env).unwrap();
    assert_eq!(off.traces_url, None, "no endpoint, no traces");
    assert_eq!(off.service_name, "switchboard");
    let refused = RawTelemetry {
        otlp_endpoint: Some("grpc://x:4317".into()),
        ..RawTelemetry::default()
    };
    let error = TelemetrySettings::validate(refused, &no_env)
        .unwrap_err()
        .to_string();
    assert!(error.contains("telemetry.otlp_endpoint"), "{error}");
    let error = TelemetrySettings::validate(RawTelemetry::default(), &env("not a url"))
        .unwrap_err()
        .to_string();
    assert!(error.contains("OTEL_EXPORTER_OTLP_ENDPOINT"), "{error}");
}

use super::*;

fn load_text(text: &str) -> Result<Settings, ConfigError> {
    from_toml_str(text, "test.toml", &Overrides::default())
}

#[test]
fn the_embedded_default_is_valid() {
    let settings = from_layers(ConfigSource::Embedded, None, &Overrides::default()).unwrap();
    assert_eq!(settings.server.bind.to_string(), "127.0.0.1:8080");
    assert!(!settings.accounts.is_empty());
    assert!(settings.schemas.len() >= 3);
    assert!(settings.payers.len() >= 40);
}

#[test]
fn a_file_merges_over_the_defaults_but_never_inherits_demo_accounts() {
    let settings = load_text("[server]\nbind = \"127.0.0.1:9999\"").unwrap();
    assert_eq!(settings.server.bind.port(), 9999);
    assert_eq!(settings.server.product_word, "Switchboard");
    assert!(settings.accounts.is_empty());
    assert!(
        settings.server.admin_token.is_none(),
        "the demo admin token is not inherited"
    );
    assert!(!settings.schemas.is_empty());
}

#[test]
fn the_header_and_lookup_words_default_to_the_product_word_and_can_be_set_apart() {
    let settings = load_text("[server]\nproduct_word = \"Acme\"").unwrap();
    assert_eq!(settings.server.auth_header_word, "Acme");
    assert_eq!(settings.server.lookup_source_word, "acme");
    let settings = load_text(
        "[server]\nauth_header_word = \"Robodialer\"\nlookup_source_word = \"SuperDial\"",
    )
    .unwrap();
    assert_eq!(settings.server.product_word, "Switchboard");
    assert_eq!(settings.server.auth_header_word, "Robodialer");
    assert_eq!(settings.server.lookup_source_word, "superdial");
    let error = load_text("[server]\nauth_header_word = \"Robo Dialer\"").unwrap_err();
    assert!(
        error.to_string().contains("server.auth_header_word"),
        "{error}"
    );
}

#[test]
fn overrides_beat_the_file() {
    let overrides = Overrides {
        bind: Some("127.0.0.1:0".into()),
        data_dir: Some("/tmp/x".into()),
        ..Overrides::default()
    };
    let settings = from_toml_str("[server]\nbind = \"127.0.0.1:9999\"", "t", &overrides).unwrap();
    assert_eq!(settings.server.bind.port(), 0);
    assert_eq!(settings.server.data_dir, PathBuf::from("/tmp/x"));
}

#[test]
fn the_going_live_example_config_loads() {
    let page = include_str!("../../docs/going-live.md");
    let example = page
        .split("<!-- going-live example config -->")
        .nth(1)
        .and_then(|rest| rest.split("```toml\n").nth(1))
        .and_then(|block| block.split("\n```").next())
        .expect("docs/going-live.md keeps its example config after the marker");
    let settings = load_text(example).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(settings.dialer.kind(), DialerKind::Simulated);
    assert!(settings.dialer_of(DialerKind::Retell).is_some());
    let dialers: Vec<_> = settings.accounts.iter().map(|a| a.dialer).collect();
    assert_eq!(dialers, [Some(DialerKind::Retell), None]);
    assert!(matches!(settings.electronic, ElectronicSettings::Stedi(_)));
    assert!(settings.payers.iter().all(|p| p.timezone.is_some()));
}

#[test]
fn an_account_dialer_needs_its_settings_and_a_payer_zone_must_be_iana() {
    let account = "[[accounts]]\nid = \"a\"\ndaily_call_capacity = 1\ndialer = \"retell\"\n";
    let err = load_text(account).unwrap_err();
    assert_eq!(err.key.as_deref(), Some("accounts[0].dialer"), "{err}");
    assert_eq!(
        err.problem,
        "names the \"retell\" dialer, but the configuration has no [dialer.retell] table to place \
         its calls"
    );
    let with_table = format!(
        "{account}[dialer.retell]\napi_key = \"k\"\nagent_id = \"agent_1\"\nfrom_number = \"+14155550100\"\n"
    );
    let settings = load_text(&with_table).unwrap();
    assert_eq!(settings.dialer.kind(), DialerKind::Simulated);
    let kinds: Vec<_> = settings.dialers.iter().map(|d| d.kind()).collect();
    assert_eq!(kinds, [DialerKind::Simulated, DialerKind::Retell]);

    let payer = "[[payers]]\nname = \"West Plan\"\ntimezone = \"Pacific Time\"";
    let err = load_text(payer).unwrap_err();
    assert_eq!(err.key.as_deref(), Some("payers[0].timezone"), "{err}");
    let payer = "[[payers]]\nname = \"West Plan\"\ntimezone = \"America/Los_Angeles\"";
    assert!(load_text(payer).is_ok());
    let proxies = "[server]\ntrusted_proxies = [\"10.0.0.0/8\", \" 127.0.0.1 \", \"fd00::/8\"]";
    let ranges: Vec<String> = load_text(proxies)
        .unwrap()
        .server
        .trusted_proxies
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(ranges, ["10.0.0.0/8", "127.0.0.1/32", "fd00::/8"]);
    assert!(load_text("").unwrap().server.trusted_proxies.is_empty());
}

#[test]
fn errors_name_the_source_the_key_and_the_problem() {
    let cases = [
        ("[server]\nbind = \"nowhere\"", "server.bind"),
        ("[server]\nbindd = \"x\"", "server.bindd"),
        ("[clock]\nmode = \"sundial\"", "clock.mode"),
        ("[clock]\nmode = \"manual\"", "clock.start"),
        ("[simulation]\ntime_scale = 0.0", "simulation.time_scale"),
        ("[dialer]\nkind = \"http\"", "dialer.url"),
        (
            "[dialer]\ncost_per_minute = -0.12",
            "dialer.cost_per_minute",
        ),
        (
            "[electronic]\ncost_per_transaction = nan",
            "electronic.cost_per_transaction",
        ),
        (
            "[webhooks]\nround_delays_s = [1, 2, 3, 4]",
            "webhooks.round_delays_s",
        ),
        (
            "[webhooks]\nround_delays_s = [900, 700000]",
            "webhooks.round_delays_s",
        ),
        (
            "[[accounts]]\nid = \"a\"\ndaily_call_capacity = 1\nschemas = [\"nope\"]",
            "accounts[0].schemas[0]",
        ),
        ("[[accounts]]\ndaily_call_capacity = 1", "accounts[0].id"),
        (
            "[[accounts]]\nid = \"a\"\ndaily_call_capacity = -1",
            "accounts[0].daily_call_capacity",
        ),
        ("[input_types]\nfoo = \"colour\"", "input_types.foo"),
        (
            "[server]\ntrusted_proxies = [\"10.0.0.0/8\", \"proxy.internal\"]",
            "server.trusted_proxies",
        ),
    ];
    for (text, key) in cases {
        let err = load_text(text).unwrap_err();
        assert_eq!(err.key.as_deref(), Some(key), "{text}: {err}");
        assert!(
            err.to_string()
                .starts_with("invalid configuration in test.toml: "),
            "{err}"
        );
    }
}

#[test]
fn a_toml_syntax_error_names_the_line() {
    let err = load_text("[server\nbind = 1").unwrap_err();
    assert!(err.problem.contains("line 1"), "{err}");
}

/// A declared dialer is checked whole whatever `[dialer] kind` is (an account may name it), so a missing
/// key's message names the table that declares it, not a kind the configuration does not choose.
#[test]
fn a_declared_dialer_table_missing_a_key_names_the_table_not_the_kind() {
    let retell = "[dialer]\nkind = \"simulated\"\n[dialer.retell]\nagent_id = \"agent_1\"\n\
                  from_number = \"+14155550100\"\n";
    let err = load_text(retell).unwrap_err();
    assert_eq!(err.key.as_deref(), Some("dialer.retell.api_key"), "{err}");
    assert_eq!(
        err.problem,
        "is required when a [dialer.retell] table is present"
    );
    let vapi = "[dialer]\nkind = \"simulated\"\n[dialer.vapi]\napi_key = \"k\"\n\
                assistant_id = \"a\"\nphone_number_id = \"p\"\n";
    let err = load_text(vapi).unwrap_err();
    assert_eq!(
        err.key.as_deref(),
        Some("dialer.vapi.server_secret"),
        "{err}"
    );
    assert_eq!(
        err.problem,
        "is required when a [dialer.vapi] table is present"
    );
    let http = "[dialer]\nkind = \"simulated\"\nurl = \"https://agent.example.com/calls\"\n";
    let err = load_text(http).unwrap_err();
    assert_eq!(err.key.as_deref(), Some("dialer.secret"), "{err}");
    assert_eq!(err.problem, "is required with dialer.url (the http dialer)");
}
