//! Where a webhook may go. Loopback, private, link-local, shared-address, multicast and cloud-metadata
//! addresses are refused unless the operator allows private targets: a webhook URL is client input, and
//! the server must not become a way to reach its own network. The check is on the resolved addresses, not
//! the host string, so a public name pointing at 127.0.0.1 is refused too, and the webhook client resolves
//! through [`GuardedResolver`], so the addresses it connects to are the ones that passed.
//!
//! Two things are judged before any resolution. Names under `localhost` (`localhost.`, `foo.localhost`)
//! are this machine's by definition (RFC 6761) whatever a resolver answers, or does not answer yet. And an
//! IPv6 address that carries an IPv4 address (IPv4-compatible `::a.b.c.d`, IPv4-mapped and -translated,
//! NAT64 `64:ff9b::/96`, 6to4 `2002::/16`, Teredo `2001::/32`) is judged by the IPv4 address it leads to,
//! so `[64:ff9b::7f00:1]` is 127.0.0.1.

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
    /// The host is a name of this machine: `localhost` or a name under it, with or without the final dot.
    #[error("webhook host {0} is a name of this machine (localhost); such targets are refused")]
    LocalName(String),
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
            TargetError::LocalName(_) => "a name of this machine",
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
    if !allow_private && is_local_name(&host) {
        return Err(TargetError::LocalName(host));
    }
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
            if !allow_private && is_local_name(&host) {
                let refused = TargetError::LocalName(host);
                return Err(Box::new(refused) as Box<dyn std::error::Error + Send + Sync>);
            }
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

/// Whether `host` (a URL's host, lowercase) is `localhost` or a name under it, final dot or not.
fn is_local_name(host: &str) -> bool {
    let name = host.trim_end_matches('.').to_ascii_lowercase();
    name == "localhost" || name.ends_with(".localhost")
}

/// Whether `ip` is a publicly routable unicast address. An IPv6 address that carries an IPv4 address is
/// public only if every IPv4 address it can lead to is.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match carried_v4(v6) {
            Carried::None => is_public_v6(v6),
            Carried::Reserved => false,
            Carried::Leads(addresses) => addresses.iter().all(|v4| is_public_v4(*v4)),
        },
    }
}

/// The IPv4 addresses an IPv6 address carries, by the transition scheme its prefix names.
enum Carried {
    /// Not a transition address.
    None,
    /// A transition range never routed to the public: deprecated or local-use.
    Reserved,
    /// The IPv4 addresses the packet may end up at.
    Leads(Vec<Ipv4Addr>),
}

fn carried_v4(ip: Ipv6Addr) -> Carried {
    let s = ip.segments();
    let v4 = |high: u16, low: u16| Ipv4Addr::from((u32::from(high) << 16) | u32::from(low));
    let last = v4(s[6], s[7]);
    match s {
        // IPv4-mapped `::ffff:a.b.c.d` and IPv4-translated `::ffff:0:a.b.c.d`.
        [0, 0, 0, 0, 0, 0xffff, ..] | [0, 0, 0, 0, 0xffff, 0, ..] => Carried::Leads(vec![last]),
        // `::` and `::1` are judged as IPv6; the rest of `::/96` is IPv4-compatible (deprecated).
        [0, 0, 0, 0, 0, 0, 0, 0 | 1] => Carried::None,
        [0, 0, 0, 0, 0, 0, ..] => Carried::Reserved,
        // NAT64's well-known prefix (RFC 6052); its local-use prefix `64:ff9b:1::/48` (RFC 8215).
        [0x64, 0xff9b, 0, 0, 0, 0, ..] => Carried::Leads(vec![last]),
        [0x64, 0xff9b, 1, ..] => Carried::Reserved,
        // 6to4 (RFC 3056): the relay's IPv4 address follows the prefix.
        [0x2002, high, low, ..] => Carried::Leads(vec![v4(high, low)]),
        // Teredo (RFC 4380): the server's address, and the client's with its bits inverted.
        [0x2001, 0, server_high, server_low, ..] => {
            Carried::Leads(vec![v4(server_high, server_low), v4(!s[6], !s[7])])
        }
        _ => Carried::None,
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
        || (first & 0xffc0) == 0xfec0 // site local (deprecated)
        || (first == 0x0100 && ip.segments()[1..4] == [0, 0, 0]) // discard-only
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
            // Loopback and private IPv4 inside IPv6 transition addresses.
            "::127.0.0.1",
            "::8.8.8.8",
            "::ffff:0:127.0.0.1",
            "64:ff9b::7f00:1",
            "64:ff9b::10.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b:1::8.8.8.8",
            "2002:7f00:1::",
            "2002:a00:1::1",
            "2002:c0a8:101::1",
            "2001:0:4136:e378:8000:63bf:80ff:fffe", // Teredo, client 127.0.0.1
            "2001:0:7f00:1:8000:63bf:f7f7:f7f7",    // Teredo, server 127.0.0.1
            "fec0::1",
            "100::1",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip}");
        }
        for ip in [
            "8.8.8.8",
            "93.184.216.34",
            "2606:4700:4700::1111",
            "64:ff9b::808:808",
            "2002:808:808::1",
        ] {
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

    #[tokio::test]
    async fn loopback_encodings_and_names_under_localhost_are_refused_unless_allowed() {
        for url in [
            "http://[::127.0.0.1]/hook",
            "http://[64:ff9b::7f00:1]/hook",
            "http://[2002:7f00:1::]/hook",
            "http://[::ffff:0:7f00:1]/hook",
        ] {
            let refused = check_target(url, false).await.unwrap_err();
            assert!(
                matches!(refused, TargetError::Private { .. }),
                "{url}: {refused}"
            );
        }
        for url in [
            "http://localhost./hook",
            "http://foo.localhost/hook",
            "http://foo.localhost./hook",
            "http://LOCALHOST/hook",
            "https://a.b.Localhost:8443/hook",
        ] {
            let refused = check_target(url, false).await.unwrap_err();
            assert!(
                matches!(refused, TargetError::LocalName(_)),
                "{url}: {refused}"
            );
        }
        assert!(check_target("http://[64:ff9b::7f00:1]/hook", true)
            .await
            .is_ok());
        assert!(!matches!(
            check_target("http://foo.localhost/hook", true).await,
            Err(TargetError::LocalName(_))
        ));
        // Not a name under localhost.
        assert!(!is_local_name("localhost.example.com"));
        assert!(!is_local_name("notlocalhost"));
    }
}
