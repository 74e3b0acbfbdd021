//! `switchboard backup`: the command-line twin of `POST /admin/v1/backups`, for cron jobs and runbooks.

use std::process::ExitCode;

use serde_json::{json, Value};

use crate::cli::BackupArgs;

/// Asks the server for a backup and reports where it went.
pub fn run(args: BackupArgs) -> ExitCode {
    let asked = actix_web::rt::System::new().block_on(ask(&args));
    match asked {
        Ok(body) => {
            println!(
                "backup written to {} ({} bytes)",
                body["path"].as_str().unwrap_or_default(),
                body["bytes"]
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("switchboard backup: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn ask(args: &BackupArgs) -> anyhow::Result<Value> {
    let url = format!("{}/admin/v1/backups", args.base_url.trim_end_matches('/'));
    let response = reqwest::Client::new()
        .post(&url)
        .bearer_auth(&args.admin_token)
        .json(&json!({ "path": args.to }))
        .send()
        .await?;
    let status = response.status();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    if !status.is_success() {
        anyhow::bail!("{url} answered {status}: {body}");
    }
    Ok(body)
}
