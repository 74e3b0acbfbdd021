//! `server.public_url`: the base of the links Switchboard hands out (`recordingDownloadUrl`, the event
//! URLs given to voice platforms). Declared by the operator, or derived from the address the listener
//! actually bound, so that `--bind 127.0.0.1:0` or `SWITCHBOARD_BIND` alone still hands out live links.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use super::ServerSettings;

/// The URL of `address` itself: `https` when the listener speaks TLS. A wildcard address (`0.0.0.0`,
/// `::`) is no place a client can reach, so it becomes the loopback address of its family; clients on
/// other hosts need a declared `public_url`.
pub(super) fn of_address(address: SocketAddr, tls: bool) -> url::Url {
    let scheme = if tls { "https" } else { "http" };
    let ip = match address.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    let address = SocketAddr::new(ip, address.port());
    url::Url::parse(&format!("{scheme}://{address}")).expect("a socket address makes a URL")
}

impl ServerSettings {
    /// Called once the listener is bound to `bound`: an undeclared `public_url` becomes the bound
    /// address (the real port when `bind` asked for port 0); a declared one is kept, and logged beside
    /// the bound address when the two differ, so an operator can see which one the links use.
    pub fn settle_public_url(&mut self, bound: SocketAddr) {
        let of_bound = of_address(bound, self.tls.is_some());
        if !self.public_url_declared {
            self.public_url = of_bound;
            tracing::info!(public_url = %self.public_url, "public_url derived from the address bound");
        } else if self.public_url.origin() != of_bound.origin() {
            tracing::info!(
                public_url = %self.public_url,
                bound = %bound,
                "public_url is declared and differs from the address bound; links use public_url"
            );
        }
    }
}

impl ServerSettings {
    /// Called once the listener is bound: an undeclared `node_url` becomes the address bound, or, for a
    /// wildcard bind (`0.0.0.0`, `::`), this machine's host name with the bound port (the name peers on a
    /// private network or a container network resolve).
    pub fn settle_node_url(&mut self, bound: SocketAddr) {
        if self.node_url.is_some() {
            return;
        }
        let tls = self.tls.is_some();
        self.node_url = if bound.ip().is_unspecified() {
            host_name().and_then(|host| {
                let scheme = if tls { "https" } else { "http" };
                url::Url::parse(&format!("{scheme}://{host}:{}", bound.port())).ok()
            })
        } else {
            Some(of_address(bound, tls))
        };
    }
}

/// This machine's host name, if it has one.
pub fn host_name() -> Option<String> {
    std::fs::read_to_string("/etc/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_of_an_address_keeps_its_port_and_turns_wildcards_into_loopback() {
        let cases = [
            ("127.0.0.1:41234", false, "http://127.0.0.1:41234/"),
            ("127.0.0.1:8443", true, "https://127.0.0.1:8443/"),
            ("0.0.0.0:8080", false, "http://127.0.0.1:8080/"),
            ("[::]:8080", false, "http://[::1]:8080/"),
            ("[::1]:9000", true, "https://[::1]:9000/"),
        ];
        for (address, tls, expected) in cases {
            let url = of_address(address.parse().unwrap(), tls);
            assert_eq!(url.as_str(), expected, "{address} tls={tls}");
        }
    }
}
