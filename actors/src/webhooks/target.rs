//! Where a webhook may go. Loopback, private, link-local, shared-address, multicast and cloud-metadata
//! addresses are refused unless the operator allows private targets: a webhook URL is client input, and
//! the server must not become a way to reach its own network. The check is on the resolved addresses, not
//! the host string, so a public name pointing at 127.0.0.1 is refused too, and the webhook client resolves
//! through [`GuardedResolver`], so the addresses it connects to are the ones that passed.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// Why a webhook URL is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// Not an http(s) URL with a host.
    #[error("webhook URL must be an http or https URL with a host")]
    NotHttp,
    /// The host did not resolve.
    #[error("webhook host {0} could not be resolved")]
    Unresolvable(String),
    /// The host resolves to an address that is not publicly routable.
    #[error("webhook host {host} resolves to {address}, a private or reserved address; such targets are refused")]
    Private {
        /// The host.
        host: String,
        /// The offending address.
        address: IpAddr,
    },
}

impl TargetError {
    /// The refusal without the host: the webhook URL is the client's, so logs get this instead.
    pub fn kind(&self) -> &'static str {
        match self {
            TargetError::NotHttp => "not an http(s) URL",
            TargetError::Unresolvable(_) => "unresolvable host",
            TargetError::Private { .. } => "private or reserved address",
        }
    }
}

/// Checks `url` and returns the addresses it resolves to.
pub async fn check_target(url: &str, allow_private: bool) -> Result<Vec<SocketAddr>, TargetError> {
    let parsed = url::Url::parse(url).map_err(|_| TargetError::NotHttp)?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(TargetError::NotHttp);
    }
    let host = parsed
        .host_str()
        .ok_or(TargetError::NotHttp)?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let port = parsed.port_or_known_default().ok_or(TargetError::NotHttp)?;
    let addresses: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), port))
        .await
        .map_err(|_| TargetError::Unresolvable(host.clone()))?
        .collect();
    if addresses.is_empty() {
        return Err(TargetError::Unresolvable(host));
    }
    if !allow_private {
        if let Some(bad) = addresses.iter().find(|a| !is_public(a.ip())) {
            return Err(TargetError::Private {
                host,
                address: bad.ip(),
            });
        }
    }
    Ok(addresses)
}

/// The webhook client's resolver: it resolves names itself and hands the HTTP client only addresses that
/// pass the same rule, so a name cannot be checked against one answer and then connect to another (DNS
/// rebinding). IP-literal URLs never reach a resolver and are checked by [`check_target`].
pub(crate) struct GuardedResolver {
    pub(crate) allow_private: bool,
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let allow_private = self.allow_private;
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let addresses: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if !allow_private {
                if let Some(bad) = addresses.iter().find(|a| !is_public(a.ip())) {
                    let refused = TargetError::Private {
                        host,
                        address: bad.ip(),
                    };
                    return Err(Box::new(refused) as Box<dyn std::error::Error + Send + Sync>);
                }
            }
            Ok(Box::new(addresses.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// Whether `ip` is a publicly routable unicast address.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_public_v4(v4),
            None => is_public_v6(v6),
        },
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    !(ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local() // includes 169.254.169.254, the cloud metadata service
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space (carrier-grade NAT)
        || (a == 192 && b == 0 && ip.octets()[2] == 0) // IETF protocol assignments
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || a >= 240) // reserved
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    !(ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00 // unique local
        || (first & 0xffc0) == 0xfe80 // link local
        || (first == 0x2001 && ip.segments()[1] == 0x0db8)) // documentation
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_and_reserved_addresses_are_not_public() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "::",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["8.8.8.8", "93.184.216.34", "2606:4700:4700::1111"] {
            assert!(is_public(ip.parse().unwrap()), "{ip}");
        }
    }

    #[tokio::test]
    async fn the_client_resolver_never_hands_out_a_private_address_unless_allowed() {
        use reqwest::dns::Resolve;
        let name = || "localhost".parse::<reqwest::dns::Name>().unwrap();
        let guarded = GuardedResolver {
            allow_private: false,
        };
        assert!(guarded.resolve(name()).await.is_err());
        let open = GuardedResolver {
            allow_private: true,
        };
        let addresses: Vec<SocketAddr> = open.resolve(name()).await.unwrap().collect();
        assert!(addresses.iter().all(|a| a.ip().is_loopback()) && !addresses.is_empty());
    }

    #[tokio::test]
    async fn loopback_targets_are_refused_unless_allowed() {
        let refused = check_target("http://127.0.0.1:9/hook", false)
            .await
            .unwrap_err();
        assert!(matches!(refused, TargetError::Private { .. }), "{refused}");
        assert!(check_target("http://localhost:9/hook", false)
            .await
            .is_err());
        assert!(check_target("http://127.0.0.1:9/hook", true).await.is_ok());
        assert_eq!(
            check_target("ftp://example.com/x", true).await.unwrap_err(),
            TargetError::NotHttp
        );
    }
}
