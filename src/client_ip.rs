//! The client's address behind a forwarding node. A standby node forwards what its clients send to the
//! node that runs requests, which would otherwise see (and audit) the standby's address. The standby names
//! the client's address in a header and proves it with a MAC under a key derived from the master key, which
//! every node of a database shares and no client has: a client that sends the header itself is not believed.

use std::net::IpAddr;

use actix_web::{web, HttpRequest};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use switchboard_storage::seal::MasterKey;

use crate::state::AppState;

/// The client's address, as the forwarding node saw it.
pub const CLIENT_IP: &str = "x-switchboard-client-ip";
/// The MAC of [`CLIENT_IP`]'s value, in hex.
pub const CLIENT_IP_PROOF: &str = "x-switchboard-client-ip-proof";

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

    /// The proof of `ip`, as [`CLIENT_IP_PROOF`] carries it.
    pub fn prove(&self, ip: IpAddr) -> String {
        let mut mac = self.0.clone();
        mac.update(ip.to_string().as_bytes());
        hex::encode(mac.finalize().into_bytes())
    }

    fn verify(&self, ip: &str, proof: &str) -> bool {
        let Ok(proof) = hex::decode(proof) else {
            return false;
        };
        let mut mac = self.0.clone();
        mac.update(ip.as_bytes());
        mac.verify_slice(&proof).is_ok()
    }
}

/// The client's address: the one a forwarding node proved, else the connection's peer.
pub fn client_ip(req: &HttpRequest) -> Option<IpAddr> {
    forwarded(req).or_else(|| req.peer_addr().map(|peer| peer.ip()))
}

fn forwarded(req: &HttpRequest) -> Option<IpAddr> {
    let key = req.app_data::<web::Data<AppState>>()?.forwarding.as_ref()?;
    let header = |name| req.headers().get(name)?.to_str().ok();
    let (ip, proof) = (header(CLIENT_IP)?, header(CLIENT_IP_PROOF)?);
    key.verify(ip, proof).then(|| ip.parse().ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proof_holds_for_its_address_and_key_only() {
        let key = ForwardingKey::derive(&MasterKey::generate());
        let ip: IpAddr = "203.0.113.7".parse().unwrap();
        let proof = key.prove(ip);
        assert!(key.verify("203.0.113.7", &proof));
        assert!(!key.verify("203.0.113.8", &proof));
        assert!(!key.verify("203.0.113.7", "00"));
        assert!(!key.verify("203.0.113.7", "not hex"));
        let other = ForwardingKey::derive(&MasterKey::generate());
        assert!(!other.verify("203.0.113.7", &proof));
    }
}
