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
    let mine = me.clone();
    let gone = move |holder: &LeaseHolder| is_previous_life(&mine, holder);
    let lease = NodeLease::acquire(url, ca_file, me, gone, watch, |reason| {
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

/// Whether `holder` is an earlier process of this node that ended without giving the lease up (killed,
/// or restarted by its supervisor): the same address on the same machine, and its process gone, or its
/// process id now this process's (a container restarted). This node holds that address's socket, so no
/// live process serves there; requiring the machine too keeps a node from taking the lease of another
/// machine that was given the same `node_url` by mistake.
fn is_previous_life(me: &LeaseHolder, holder: &LeaseHolder) -> bool {
    let (Some(mine), Some(theirs)) = (&me.node_url, &holder.node_url) else {
        return false;
    };
    let (Some((my_host, my_pid)), Some((host, pid))) =
        (host_and_pid(&me.name), host_and_pid(&holder.name))
    else {
        return false;
    };
    mine == theirs
        && my_host == host
        && holder.name != me.name
        && (pid == my_pid || !process_alive(pid))
}

/// The machine and process id of a lease holder's name.
fn host_and_pid(name: &str) -> Option<(&str, u32)> {
    let mut parts = name.rsplitn(3, ':');
    let _random = parts.next()?;
    let pid = parts.next()?.parse().ok()?;
    Some((parts.next()?, pid))
}

/// Whether a process `pid` runs on this machine. Where that cannot be told, it is taken to run.
fn process_alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        std::path::Path::new("/proc").join(pid.to_string()).exists()
    } else {
        true
    }
}

/// `host:pid:random`: unique per process, and says which machine and process holds the lease.
fn node_name() -> String {
    let host = crate::configuration::host_name().unwrap_or_else(|| "node".to_owned());
    let random = uuid::Uuid::new_v4().simple().to_string();
    format!("{host}:{}:{}", std::process::id(), &random[..8])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holder(name: &str, node_url: &str) -> LeaseHolder {
        LeaseHolder {
            name: name.to_owned(),
            node_url: Some(node_url.to_owned()),
        }
    }

    #[test]
    fn a_gone_process_at_this_nodes_address_on_this_machine_is_a_previous_life() {
        let me = holder(
            &format!("db1:{}:aaaa", std::process::id()),
            "http://10.0.0.1:8080/",
        );
        // No process has pid 4,000,000 (above Linux's pid_max).
        let dead = holder("db1:4000000:bbbb", "http://10.0.0.1:8080/");
        assert!(is_previous_life(&me, &dead));
        let same_pid = holder(
            &format!("db1:{}:cccc", std::process::id()),
            "http://10.0.0.1:8080/",
        );
        assert!(is_previous_life(&me, &same_pid), "a restarted container");
    }

    #[test]
    fn another_address_machine_or_a_live_process_is_not() {
        let me = holder(
            &format!("db1:{}:aaaa", std::process::id()),
            "http://10.0.0.1:8080/",
        );
        assert!(!is_previous_life(
            &me,
            &holder("db1:4000000:b", "http://10.0.0.2:8080/")
        ));
        assert!(!is_previous_life(
            &me,
            &holder("db2:4000000:b", "http://10.0.0.1:8080/")
        ));
        assert!(
            !is_previous_life(&me, &holder("db1:1:b", "http://10.0.0.1:8080/")),
            "pid 1 runs"
        );
        assert!(!is_previous_life(&me, &me), "itself");
    }
}
