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

/// Where to write a backup.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BackupIn {
    /// An absolute path that does not exist yet, outside `data_dir`, whose parent exists.
    path: String,
}

/// Write a backup
///
/// 200 `{"path","bytes"}` once the copy is complete and synced; `path` is where the copy went, resolved
/// (`..` and symbolic links), inside `[server] backup_root` when one is set.
#[utoipa::path(post, path = "/admin/v1/backups", operation_id = "createBackup",
    request_body = BackupIn,
    responses(
        (status = 200, description = "Written.", body = crate::wire::BackupOut),
        (status = 400, description = "`INVALID_REQUEST`: the path (not absolute, outside backup_root, a control character).", body = crate::wire::ErrorOut),
        (status = 409, description = "`CONFLICT`: the path exists, or the store is in PostgreSQL.", body = crate::wire::ErrorOut),
    ))]
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
             (pg_dump, or the provider's snapshots), and keep the master key apart from those backups \
             (a backup is sealed: it needs the key to be read, so the two must not travel together)",
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
