//! `POST /admin/v1/backups`: a consistent copy of the store while the server keeps serving.

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::json;
use switchboard_storage::EngineChoice;

use super::backup_target::resolve;
use super::AdminJson;
use crate::auth::Admin;
use crate::errors::{ApiError, Code};
use crate::state::AppState;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackupIn {
    path: String,
}

/// 200 `{"path","bytes"}` once the copy is complete and synced; `path` is where the copy went, resolved
/// (see [`super::backup_target`]).
#[tracing::instrument(name = "admin_backup", skip_all)]
pub async fn create_backup(
    Admin(operator): Admin,
    state: web::Data<AppState>,
    body: AdminJson<BackupIn>,
) -> Result<HttpResponse, ApiError> {
    if !matches!(state.settings.storage_engine, EngineChoice::Sled) {
        return Err(ApiError::new(
            Code::Conflict,
            "this server keeps its store in PostgreSQL: back the database up with its own tools \
             (pg_dump, or the provider's snapshots) together with the master key",
        ));
    }
    let data_dir = state.settings.server.data_dir.clone();
    let target = resolve(
        &body.path,
        state.settings.server.backup_root.as_deref(),
        &data_dir,
    )?;
    let store = state.store.clone();
    let into = target.clone();
    let backup = web::block(move || store.backup(&data_dir, &into))
        .await
        .map_err(ApiError::internal)??;
    tracing::info!(
        bytes = backup.bytes,
        writes_held_ms = backup.paused.as_millis() as u64,
        "backup written"
    );
    let event = crate::audit::change(
        &state,
        &operator,
        "backup.create",
        "backup",
        &target.display().to_string(),
    );
    state.store.audit_now(vec![event]).await?;
    Ok(HttpResponse::Ok().json(json!({
        "path": target.display().to_string(),
        "bytes": backup.bytes,
    })))
}
