//! The two rates are checked at start-up: a negative, infinite, not-a-number, absurdly large or
//! non-numeric price stops the binary with a message naming the file, the key and what a price must be.

use std::process::Command;

use crate::helpers::{binary, run_to_exit};

/// Runs `serve --config` on `text` (appended to a valid file); answers stderr after checking the run
/// failed without serving.
fn refused(text: &str) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("switchboard.toml");
    std::fs::write(&path, format!("[server]\nbind = \"127.0.0.1:0\"\n{text}")).unwrap();
    let mut command = Command::new(binary());
    command
        .args(["serve", "--config"])
        .arg(&path)
        .env_remove("SWITCHBOARD_CONFIG")
        .env_remove("SWITCHBOARD_BIND")
        .env("SWITCHBOARD_DATA_DIR", dir.path())
        .env("RUST_LOG", "warn")
        .current_dir(dir.path());
    let output = run_to_exit(command);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.code().is_some_and(|c| c != 0),
        "{text:?} started: {stderr}"
    );
    assert!(output.stdout.is_empty(), "{text:?}: nothing is served");
    (path.display().to_string(), stderr)
}

#[test]
fn a_rate_that_is_not_a_price_stops_start_up_naming_the_key() {
    let cases = [
        (
            "[dialer]\ncost_per_minute = -0.12\n",
            "dialer.cost_per_minute",
            true,
        ),
        (
            "[dialer]\ncost_per_minute = inf\n",
            "dialer.cost_per_minute",
            true,
        ),
        (
            "[dialer]\ncost_per_minute = 2e6\n",
            "dialer.cost_per_minute",
            true,
        ),
        (
            "[electronic]\ncost_per_transaction = nan\n",
            "electronic.cost_per_transaction",
            true,
        ),
        (
            "[electronic]\ncost_per_transaction = -1\n",
            "electronic.cost_per_transaction",
            true,
        ),
        (
            "[electronic]\ncost_per_transaction = \"0.30\"\n",
            "cost_per_transaction",
            false,
        ),
    ];
    for (text, key, ours) in cases {
        let (path, stderr) = refused(text);
        assert!(
            stderr.contains(&path),
            "{text:?}: the file is not named: {stderr}"
        );
        assert!(
            stderr.contains(key),
            "{text:?}: {key} is not named: {stderr}"
        );
        if ours {
            assert!(
                stderr.contains("must be a finite number of US dollars from 0 to 1000000"),
                "{text:?}: {stderr}"
            );
        }
    }
}
