//! This node's turn on a shared PostgreSQL database: it runs requests only while it holds the orchestrator
//! lease, and a node that loses it stops at once, so two nodes never run the same request. Until it holds
//! the lease it forwards its clients to the node that does (`standby`), at the address the lease names.

use switchboard_storage::{LeaseHolder, NodeLease, FENCE_AFTER, LEASE_TTL};

use crate::standby::Route;

/// Takes the lease, standing by for as long as another node holds it, and keeping `route` on that node.
pub async fn take(
    url: &str,
    ca_file: Option<&std::path::Path>,
    node_url: Option<&url::Url>,
    route: Route,
) -> anyhow::Result<NodeLease> {
    let me = LeaseHolder {
        name: node_name(),
        node_url: node_url.map(|url| url.to_string()),
    };
    let mut seen: Option<LeaseHolder> = None;
    let watch = move |current: Option<&LeaseHolder>| {
        route.set(current.and_then(|holder| url::Url::parse(holder.node_url.as_deref()?).ok()));
        if current == seen.as_ref() {
            return;
        }
        seen = current.cloned();
        match current {
            Some(holder) if holder.node_url.is_some() => tracing::info!(
                holder = holder.name,
                node_url = holder.node_url,
                lease_seconds = LEASE_TTL.as_secs(),
                "standing by: another node runs requests on this database, and this one forwards its \
                 clients there; taking over when it stops renewing its lease"
            ),
            Some(holder) => tracing::warn!(
                holder = holder.name,
                "standing by: the node that runs requests named no address (set server.node_url on \
                 it), so this one answers its clients 503 until it takes over"
            ),
            None => tracing::info!("standing by: no node holds the lease; taking it"),
        }
    };
    let lease = NodeLease::acquire(url, ca_file, me, watch, |reason| {
        // Its requests are the next holder's from now on: going on would run them twice.
        tracing::error!(
            reason,
            fence_seconds = FENCE_AFTER.as_secs(),
            "this node lost the orchestrator lease and stops; a standby takes its requests over"
        );
        std::process::exit(1);
    })
    .await?;
    tracing::info!(
        node = lease.holder(),
        "this node holds the orchestrator lease"
    );
    Ok(lease)
}

/// `host:pid:random`: unique per process, and says which machine and process holds the lease.
fn node_name() -> String {
    let host = crate::configuration::host_name().unwrap_or_else(|| "node".to_owned());
    let random = uuid::Uuid::new_v4().simple().to_string();
    format!("{host}:{}:{}", std::process::id(), &random[..8])
}
