//! The client's address behind a forwarding node. A standby node forwards what its clients send to the
//! node that runs requests, which would otherwise see (and audit) the standby's address. The standby names
//! the client's address in a header and proves it with a MAC under a key derived from the master key, which
//! every node of a database shares and no client has: a client that sends the header itself is not believed.
//! The proof also covers the method, the path and query and the time it was made, so one seen on the wire
//! proves nothing for a call of another method or path, nor for any call a minute later. It does not cover
//! the body: within that minute it would prove the address of the same call with another body.
//!
//! Behind the operator's own reverse proxy or load balancer every peer is that proxy. A call whose peer is
//! one of `[server] trusted_proxies` is taken from the address its `X-Forwarded-For` names: read from the
//! right (each proxy appends the address it received from), the first address that is not a trusted proxy.
//! Addresses left of it were written by the client, or by proxies nobody vouches for, and are ignored.

use std::net::IpAddr;

use actix_web::http::header::HeaderMap;
use actix_web::{web, HttpRequest};
use hmac::{Hmac, Mac};
use ipnet::IpNet;
use sha2::Sha256;
use switchboard_storage::seal::MasterKey;

use crate::state::AppState;

/// The client's address, as the forwarding node saw it.
pub const CLIENT_IP: &str = "x-switchboard-client-ip";
/// `{unix seconds}.{MAC in hex}`: when the proof was made, and the MAC of the address, the time, the method
/// and the path.
pub const CLIENT_IP_PROOF: &str = "x-switchboard-client-ip-proof";

/// How far a proof's time may be from the receiving node's clock (nodes keep theirs by NTP). Past it the
/// address is the forwarding node's, as without a proof.
const PROOF_WINDOW_SECONDS: i64 = 60;

/// The key that proves a forwarded client address.
#[derive(Clone)]
pub struct ForwardingKey(Hmac<Sha256>);

impl ForwardingKey {
    /// The key every node with `master` derives alike.
    pub fn derive(master: &MasterKey) -> ForwardingKey {
        let key = master.derive(b"forwarded client address");
        ForwardingKey(
            <Hmac<Sha256> as Mac>::new_from_slice(key.as_ref()).expect("HMAC takes any key length"),
        )
    }

    /// The proof that a call of `method` to `path` came from `ip`, made at `now` (unix seconds), as
    /// [`CLIENT_IP_PROOF`] carries it.
    pub fn prove(&self, ip: IpAddr, method: &str, path: &str, now: i64) -> String {
        let mac = self.mac(&ip.to_string(), method, path, now);
        format!("{now}.{}", hex::encode(mac.finalize().into_bytes()))
    }

    fn verify(&self, ip: &str, method: &str, path: &str, proof: &str, now: i64) -> bool {
        let Some((made, mac)) = proof.split_once('.') else {
            return false;
        };
        let (Ok(made), Ok(mac)) = (made.parse::<i64>(), hex::decode(mac)) else {
            return false;
        };
        (now - made).abs() <= PROOF_WINDOW_SECONDS
            && self.mac(ip, method, path, made).verify_slice(&mac).is_ok()
    }

    fn mac(&self, ip: &str, method: &str, path: &str, made: i64) -> Hmac<Sha256> {
        let mut mac = self.0.clone();
        for part in [ip, method, path, &made.to_string()] {
            mac.update(part.as_bytes());
            mac.update(&[0]);
        }
        mac
    }
}

/// Unix seconds by the system's clock (never the manual clock of a demo: proofs cross nodes).
pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs() as i64)
}

/// The path and query of `req`, as a proof covers it.
pub fn path_of(req: &HttpRequest) -> &str {
    req.uri().path_and_query().map_or("/", |path| path.as_str())
}

/// The client's address: the one a forwarding node proved, else the connection's peer or, when the peer
/// is a trusted proxy, the address it names.
pub fn client_ip(req: &HttpRequest) -> Option<IpAddr> {
    let state = req.app_data::<web::Data<AppState>>();
    if let Some(ip) = state.and_then(|state| forwarded(req, state.forwarding.as_ref()?)) {
        return Some(ip);
    }
    let peer = req.peer_addr()?.ip();
    let trusted = state.map_or(&[][..], |state| &state.settings.server.trusted_proxies);
    Some(behind_proxies(peer, req.headers(), trusted))
}

/// The address a call from `peer` comes from, past the proxies in `trusted` (see the module's notes).
pub fn behind_proxies(peer: IpAddr, headers: &HeaderMap, trusted: &[IpNet]) -> IpAddr {
    // Every address compared is canonical: an IPv4 peer of an IPv6 listener is its IPv4 address.
    let is_trusted = |ip: &IpAddr| trusted.iter().any(|net| net.contains(ip));
    let mut client = peer.to_canonical();
    if !is_trusted(&client) {
        return client;
    }
    // Several header lines are one list, in order; the hops are read from the last one back.
    let hops = headers
        .get_all("x-forwarded-for")
        .flat_map(|line| line.to_str().unwrap_or_default().split(','))
        .collect::<Vec<_>>();
    for hop in hops.into_iter().rev() {
        // Something that is not an address ends the walk at the last proxy that wrote one.
        let Some(ip) = parse_hop(hop.trim()) else {
            break;
        };
        client = ip;
        if !is_trusted(&client) {
            break;
        }
    }
    client
}

/// One `X-Forwarded-For` entry: an address, or an address and port as some proxies write it.
fn parse_hop(hop: &str) -> Option<IpAddr> {
    hop.parse::<IpAddr>()
        .or_else(|_| hop.parse::<std::net::SocketAddr>().map(|a| a.ip()))
        .ok()
        .map(|ip| ip.to_canonical())
}

fn forwarded(req: &HttpRequest, key: &ForwardingKey) -> Option<IpAddr> {
    let header = |name| req.headers().get(name)?.to_str().ok();
    let (ip, proof) = (header(CLIENT_IP)?, header(CLIENT_IP_PROOF)?);
    key.verify(ip, req.method().as_str(), path_of(req), proof, unix_now())
        .then(|| ip.parse().ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn behind_trusted_proxies_the_client_is_the_first_untrusted_hop_from_the_right() {
        let trusted: Vec<IpNet> = vec![
            "10.0.0.0/8".parse().unwrap(),
            "127.0.0.1/32".parse().unwrap(),
        ];
        let proxy: IpAddr = "10.1.2.3".parse().unwrap();
        let headers = |lines: &[&str]| {
            let mut map = HeaderMap::new();
            for line in lines {
                map.append(
                    actix_web::http::header::HeaderName::from_static("x-forwarded-for"),
                    line.parse().unwrap(),
                );
            }
            map
        };
        // (peer, X-Forwarded-For lines, client, why)
        let cases: [(&str, &[&str], &str, &str); 9] = [
            (
                "203.0.113.9",
                &["198.51.100.1"],
                "203.0.113.9",
                "an untrusted peer's header is ignored",
            ),
            ("10.1.2.3", &[], "10.1.2.3", "a trusted peer naming nobody"),
            ("10.1.2.3", &["203.0.113.9"], "203.0.113.9", "one proxy"),
            (
                "10.1.2.3",
                &["198.51.100.1, 203.0.113.9"],
                "203.0.113.9",
                "a client's own entry is left of the proxy's",
            ),
            (
                "10.1.2.3",
                &["203.0.113.9, 10.9.9.9"],
                "203.0.113.9",
                "two trusted proxies",
            ),
            (
                "10.1.2.3",
                &["198.51.100.1", "203.0.113.9, 10.9.9.9"],
                "203.0.113.9",
                "several header lines are one list",
            ),
            (
                "10.1.2.3",
                &["10.5.5.5, 127.0.0.1"],
                "10.5.5.5",
                "every hop trusted: the farthest",
            ),
            (
                "10.1.2.3",
                &["203.0.113.9, unknown"],
                "10.1.2.3",
                "not an address ends the walk",
            ),
            (
                "::ffff:10.1.2.3",
                &["[2001:db8::7]:4711"],
                "2001:db8::7",
                "mapped peer, address and port",
            ),
        ];
        for (peer, lines, client, why) in cases {
            let peer: IpAddr = peer.parse().unwrap();
            let expected: IpAddr = client.parse().unwrap();
            assert_eq!(
                behind_proxies(peer, &headers(lines), &trusted),
                expected,
                "{why}"
            );
        }
        assert_eq!(
            behind_proxies(proxy, &headers(&["203.0.113.9"]), &[]),
            proxy,
            "no proxy trusted"
        );
    }

    #[test]
    fn a_proof_holds_for_its_address_call_time_and_key_only() {
        let key = ForwardingKey::derive(&MasterKey::generate());
        let ip: IpAddr = "203.0.113.7".parse().unwrap();
        let now = 1_790_000_000;
        let proof = key.prove(ip, "POST", "/v1/requests", now);
        let (made, mac) = proof.split_once('.').unwrap();
        let moved = format!("{}.{mac}", made.parse::<i64>().unwrap() + 1);
        // (address, method, path, proof, checked at, holds, why)
        let cases = [
            (
                "203.0.113.7",
                "POST",
                "/v1/requests",
                proof.as_str(),
                now,
                true,
                "as made",
            ),
            (
                "203.0.113.7",
                "POST",
                "/v1/requests",
                &proof,
                now + 60,
                true,
                "a minute on",
            ),
            (
                "203.0.113.7",
                "POST",
                "/v1/requests",
                &proof,
                now + 61,
                false,
                "stale",
            ),
            (
                "203.0.113.8",
                "POST",
                "/v1/requests",
                &proof,
                now,
                false,
                "another address",
            ),
            (
                "203.0.113.7",
                "GET",
                "/v1/requests",
                &proof,
                now,
                false,
                "another method",
            ),
            (
                "203.0.113.7",
                "POST",
                "/v1/requests?x=1",
                &proof,
                now,
                false,
                "another path",
            ),
            (
                "203.0.113.7",
                "POST",
                "/v1/requests",
                &moved,
                now,
                false,
                "time is covered",
            ),
            (
                "203.0.113.7",
                "POST",
                "/v1/requests",
                "00",
                now,
                false,
                "no time",
            ),
            (
                "203.0.113.7",
                "POST",
                "/v1/requests",
                "1.not hex",
                now,
                false,
                "not hex",
            ),
        ];
        for (address, method, path, proof, at, holds, why) in cases {
            assert_eq!(key.verify(address, method, path, proof, at), holds, "{why}");
        }
        let other = ForwardingKey::derive(&MasterKey::generate());
        assert!(
            !other.verify("203.0.113.7", "POST", "/v1/requests", &proof, now),
            "another key"
        );
    }
}
