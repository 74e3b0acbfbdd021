//! Throttling of failed sign-ins (operator contract section 12): `GET /v1/auth` exchanges that fail, per
//! API key and per client address, and admin API or console calls with an unknown token, per client
//! address. Once a key or an address has made its limit of failures within a window (`[throttle]`), every
//! call of that key or from that address is refused with 429 and `Retry-After` until the window ends, a
//! correct secret or token included: otherwise the answer to a correct guess would tell it apart.
//!
//! Failures below the limit are audited one by one by their handlers, as before. The refused calls are
//! not: each window that refused any becomes one audit event with their `count`, written when it ends
//! (or at shutdown), so a flood cannot fill the log. Time is the process's monotonic time, never the
//! injected clock: moving a demo's manual clock neither lifts nor extends a throttle.
//!
//! The client address is `client_ip`'s (the peer, the proven address behind a forwarding node, or the one
//! a trusted proxy names). API keys are held as a digest, never as sent.

mod table;

use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use switchboard_actors::Metrics;
use switchboard_storage::audit::{Actor, NewEvent, Target};

use crate::configuration::ThrottleSettings;
use crate::state::AppState;
pub use table::Ended;
use table::Table;

/// Which count refused a call: the label of `switchboard_throttled_total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `GET /v1/auth`, for its API key.
    AuthKey,
    /// `GET /v1/auth`, from its client address.
    AuthAddress,
    /// The admin API and the console, from the client address.
    AdminAddress,
}

impl Kind {
    /// Every kind, as the metric's series start.
    pub const ALL: [Kind; 3] = [Kind::AuthKey, Kind::AuthAddress, Kind::AdminAddress];

    /// The metric label.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::AuthKey => "auth_key",
            Kind::AuthAddress => "auth_address",
            Kind::AdminAddress => "admin_address",
        }
    }
}

/// A refused call: by which count, and for how much longer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The count that refused it.
    pub kind: Kind,
    /// Until the window ends.
    pub remaining: Duration,
}

impl Refusal {
    /// `Retry-After` in whole seconds, rounded up so a client that waits it is not refused again.
    pub fn retry_after_secs(&self) -> u64 {
        let secs = self.remaining.as_secs() + u64::from(self.remaining.subsec_nanos() > 0);
        secs.max(1)
    }
}

/// A failure as the audit log describes it: the window's event is its last failure's, with a count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Denial {
    /// Who failed.
    pub actor: Actor,
    /// `auth.token` or `admin.access`.
    pub action: &'static str,
    /// On what.
    pub target: Option<Target>,
    /// From where.
    pub ip: Option<IpAddr>,
}

impl Denial {
    /// The same failure, as an address's window tells it: many keys or tokens may have failed from one
    /// address, so it names none of them.
    fn of_address(&self) -> Denial {
        Denial {
            actor: Actor {
                id: "unknown".into(),
                kind: self.actor.kind.clone(),
            },
            action: self.action,
            target: None,
            ip: self.ip,
        }
    }
}

/// The three counts of one server.
pub struct Throttle {
    auth_keys: Mutex<Table<[u8; 16]>>,
    auth_addresses: Mutex<Table<IpAddr>>,
    admin_addresses: Mutex<Table<IpAddr>>,
    metrics: Arc<Metrics>,
}

impl Throttle {
    /// Empty counts under `settings`; refusals are counted in `metrics`.
    pub fn new(settings: &ThrottleSettings, metrics: Arc<Metrics>) -> Throttle {
        fn table<K: std::hash::Hash + Eq>(
            limit: u32,
            settings: &ThrottleSettings,
        ) -> Mutex<Table<K>> {
            Mutex::new(Table::new(limit, settings.window, settings.max_tracked))
        }
        Throttle {
            auth_keys: table(settings.auth_failures_per_key, settings),
            auth_addresses: table(settings.auth_failures_per_address, settings),
            admin_addresses: table(settings.admin_failures_per_address, settings),
            metrics,
        }
    }

    /// Whether a `GET /v1/auth` with `key` from `ip` is refused now; the refusal is counted.
    pub fn auth_refused(
        &self,
        key: Option<&str>,
        ip: Option<IpAddr>,
        now: Instant,
    ) -> Option<Refusal> {
        let by_address = ip.and_then(|ip| {
            locked(&self.auth_addresses)
                .refused(&client(ip), now)
                .map(|remaining| Refusal {
                    kind: Kind::AuthAddress,
                    remaining,
                })
        });
        let refusal = by_address.or_else(|| {
            key.and_then(|key| {
                locked(&self.auth_keys)
                    .refused(&key_digest(key), now)
                    .map(|remaining| Refusal {
                        kind: Kind::AuthKey,
                        remaining,
                    })
            })
        });
        self.count(refusal)
    }

    /// Counts a failed exchange with `key` from `ip`, described by `denial`.
    pub fn auth_failed(&self, key: Option<&str>, ip: Option<IpAddr>, denial: Denial, now: Instant) {
        if let Some(ip) = ip {
            locked(&self.auth_addresses).failed(client(ip), now, denial.of_address());
        }
        if let Some(key) = key {
            locked(&self.auth_keys).failed(key_digest(key), now, denial);
        }
    }

    /// Whether an admin or console call from `ip` is refused now; the refusal is counted.
    pub fn admin_refused(&self, ip: Option<IpAddr>, now: Instant) -> Option<Refusal> {
        let refusal = ip.and_then(|ip| {
            locked(&self.admin_addresses)
                .refused(&client(ip), now)
                .map(|remaining| Refusal {
                    kind: Kind::AdminAddress,
                    remaining,
                })
        });
        self.count(refusal)
    }

    /// Counts an admin or console call from `ip` whose token is unknown, described by `denial`.
    pub fn admin_failed(&self, ip: Option<IpAddr>, denial: Denial, now: Instant) {
        if let Some(ip) = ip {
            locked(&self.admin_addresses).failed(client(ip), now, denial.of_address());
        }
    }

    /// The windows that ended with refusals, each once; ended windows are forgotten.
    pub fn take_ended(&self, now: Instant) -> Vec<Ended> {
        let mut ended = locked(&self.auth_keys).take_ended(now);
        ended.extend(locked(&self.auth_addresses).take_ended(now));
        ended.extend(locked(&self.admin_addresses).take_ended(now));
        ended
    }

    /// Every window with refusals, ended or not: at shutdown, so no count is lost.
    pub fn take_all(&self) -> Vec<Ended> {
        let mut ended = locked(&self.auth_keys).take_all();
        ended.extend(locked(&self.auth_addresses).take_all());
        ended.extend(locked(&self.admin_addresses).take_all());
        ended
    }

    fn count(&self, refusal: Option<Refusal>) -> Option<Refusal> {
        if let Some(refusal) = &refusal {
            self.metrics.throttled(refusal.kind.as_str());
        }
        refusal
    }
}

/// Audits the windows that ended with refusals, one event each, every second while the server runs.
pub async fn audit_loop(state: actix_web::web::Data<AppState>) {
    loop {
        actix_web::rt::time::sleep(AUDIT_EVERY).await;
        let ended = state.throttle.take_ended(Instant::now());
        audit(&state, ended);
    }
}

/// How often ended windows are looked for: their events are at most this late.
const AUDIT_EVERY: Duration = Duration::from_secs(1);

/// One event per window: its last failure, with the number of calls refused as `count`.
pub fn audit(state: &AppState, ended: Vec<Ended>) {
    let at = state.clock.now();
    for window in ended {
        let denial = window.denial;
        state.store.audit_read(NewEvent {
            at,
            actor: denial.actor,
            action: denial.action.into(),
            target: denial.target,
            outcome: "denied".into(),
            ip: denial.ip,
            count: Some(window.refused),
        });
    }
}

/// The client an address is counted as: an IPv4 address itself (an IPv4-mapped IPv6 one as that address),
/// an IPv6 address by its /64, the block one subscriber is given, so that the 2^64 addresses of one
/// network count as one client rather than each as a fresh one.
fn client(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let network = u128::from(v6) & !((1u128 << 64) - 1);
                IpAddr::V6(std::net::Ipv6Addr::from(network))
            }
        },
    }
}

/// A key is held by a digest: fixed in size whatever was sent, and not the text itself.
fn key_digest(key: &str) -> [u8; 16] {
    let digest = Sha256::digest(key.as_bytes());
    digest[..16].try_into().expect("a SHA-256 has 32 bytes")
}

fn locked<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic while counting leaves counts that are still counts.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::client;

    #[test]
    fn an_ipv6_client_is_counted_by_its_64_and_a_mapped_ipv4_one_as_ipv4() {
        let one = client("2001:db8:1:2:aaaa::1".parse().unwrap());
        let other = client("2001:db8:1:2:ffff:ffff:ffff:ffff".parse().unwrap());
        assert_eq!(one, other, "one /64, one client");
        assert_ne!(one, client("2001:db8:1:3::1".parse().unwrap()));
        assert_eq!(
            client("::ffff:198.51.100.7".parse().unwrap()),
            client("198.51.100.7".parse().unwrap())
        );
    }
}
