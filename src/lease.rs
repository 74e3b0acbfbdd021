//! This node's turn on a shared PostgreSQL database: it runs requests only while it holds the orchestrator
//! lease, and a node that loses it stops at once, so two nodes never run the same request.

use switchboard_storage::{NodeLease, FENCE_AFTER, LEASE_TTL};

/// Takes the lease, standing by for as long as another node holds it.
pub async fn take(url: &str, ca_file: Option<&std::path::Path>) -> anyhow::Result<NodeLease> {
    let holder = node_name();
    let lease = NodeLease::acquire(
        url,
        ca_file,
        holder.clone(),
        |current| {
            tracing::info!(
                holder = current,
                lease_seconds = LEASE_TTL.as_secs(),
                "standing by: another node runs requests on this database; taking over when it stops \
                 renewing its lease"
            );
        },
        |reason| {
            // Its requests are the next holder's from now on: going on would run them twice.
            tracing::error!(
                reason,
                fence_seconds = FENCE_AFTER.as_secs(),
                "this node lost the orchestrator lease and stops; a standby takes its requests over"
            );
            std::process::exit(1);
        },
    )
    .await?;
    tracing::info!(
        node = lease.holder(),
        "this node holds the orchestrator lease"
    );
    Ok(lease)
}

/// `host:pid:random`: unique per process, and says which machine and process holds the lease.
fn node_name() -> String {
    let host = std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "node".to_owned());
    let random = uuid::Uuid::new_v4().simple().to_string();
    format!("{host}:{}:{}", std::process::id(), &random[..8])
}
