//! The canonical JSON of an event without its hash, written by hand: keys in sorted order, compact, strings
//! escaped as serde_json escapes them. An auditor recomputes the chain from these bytes, so they must be
//! exactly what serde_json writes for the same fields; the tests hold the two side by side. Written by hand
//! because every read of a request chains one event on the flusher's thread, and serde's field-by-field
//! machinery and its byte-by-byte escaping of the fixed words and the hex hash cost more than the SHA-256.

use std::net::IpAddr;

use super::event::{Actor, Target};

/// The fields that are hashed, borrowed. Tests serialize it with serde_json too: the reference the
/// hand-written form must equal.
#[cfg_attr(test, derive(serde::Serialize))]
#[cfg_attr(test, serde(rename_all = "camelCase"))]
pub(super) struct Unhashed<'a> {
    pub(super) action: &'a str,
    pub(super) actor: &'a Actor,
    pub(super) at: &'a str,
    #[cfg_attr(test, serde(skip_serializing_if = "Option::is_none"))]
    pub(super) count: Option<u64>,
    #[cfg_attr(test, serde(skip_serializing_if = "Option::is_none"))]
    pub(super) ip: Option<&'a str>,
    pub(super) outcome: &'a str,
    pub(super) prev_hash: &'a str,
    pub(super) seq: u64,
    #[cfg_attr(test, serde(skip_serializing_if = "Option::is_none"))]
    pub(super) target: Option<&'a Target>,
}

impl Unhashed<'_> {
    /// Appends the canonical JSON to `out`.
    pub(super) fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"action\":");
        put_str(out, self.action);
        out.extend_from_slice(b",\"actor\":{\"id\":");
        put_str(out, &self.actor.id);
        out.extend_from_slice(b",\"kind\":");
        put_str(out, &self.actor.kind);
        out.extend_from_slice(b"},\"at\":");
        put_str(out, self.at);
        if let Some(count) = self.count {
            out.extend_from_slice(b",\"count\":");
            put_u64(out, count);
        }
        if let Some(ip) = self.ip {
            out.extend_from_slice(b",\"ip\":");
            put_str(out, ip);
        }
        out.extend_from_slice(b",\"outcome\":");
        put_str(out, self.outcome);
        out.extend_from_slice(b",\"prevHash\":");
        put_str(out, self.prev_hash);
        out.extend_from_slice(b",\"seq\":");
        put_u64(out, self.seq);
        if let Some(target) = self.target {
            out.extend_from_slice(b",\"target\":{\"id\":");
            put_str(out, &target.id);
            out.extend_from_slice(b",\"kind\":");
            put_str(out, &target.kind);
            out.push(b'}');
        }
        out.push(b'}');
    }
}

/// `s` as a JSON string. Nearly every string here needs no escape (fixed words, hex, instants, ids): those
/// are copied whole after one pass that the compiler vectorizes; the rest go through serde_json.
fn put_str(out: &mut Vec<u8>, s: &str) {
    let escaped = s.bytes().fold(false, |any, b| {
        any | (b < 0x20) | (b == b'"') | (b == b'\\')
    });
    if escaped {
        serde_json::to_writer(&mut *out, s).expect("a string serializes into memory");
    } else {
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    }
}

fn put_u64(out: &mut Vec<u8>, mut value: u64) {
    let mut digits = [0; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[start..]);
}

/// The longest text of an address (an IPv6 address with an embedded IPv4 one).
pub(super) const IP_TEXT: usize = 45;

/// `address` as its standard text, in `buf`. An IPv4 address, nearly every client's, is written digit by
/// digit rather than through the formatting machinery.
pub(super) fn ip_text(address: IpAddr, buf: &mut [u8; IP_TEXT]) -> &str {
    let len = match address {
        IpAddr::V4(v4) => {
            let mut len = 0;
            for (n, octet) in v4.octets().into_iter().enumerate() {
                if n > 0 {
                    buf[len] = b'.';
                    len += 1;
                }
                let (hundreds, tens, ones) = (octet / 100, octet / 10 % 10, octet % 10);
                if hundreds > 0 {
                    buf[len] = b'0' + hundreds;
                    len += 1;
                }
                if hundreds > 0 || tens > 0 {
                    buf[len] = b'0' + tens;
                    len += 1;
                }
                buf[len] = b'0' + ones;
                len += 1;
            }
            len
        }
        IpAddr::V6(_) => {
            use std::io::Write;
            let mut cursor = std::io::Cursor::new(&mut buf[..]);
            write!(cursor, "{address}").expect("an address fits its longest text");
            cursor.position() as usize
        }
    };
    std::str::from_utf8(&buf[..len]).expect("an address is ASCII")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    #[test]
    fn the_hand_written_form_is_what_serde_json_writes() {
        let odd =
            "quote \" backslash \\ newline \n tab \t nul \u{0} bell \u{7} del \u{7f} é 日本 🎉";
        let actors = [
            Actor::operator("alice"),
            Actor::api_key("cred_1"),
            Actor::system(),
            Actor {
                id: odd.into(),
                kind: Cow::Owned("operator".into()),
            },
        ];
        let targets = [
            None,
            Some(Target::new(
                "request",
                "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f0001",
            )),
            Some(Target::new(
                "backup",
                "/var/backups/switchboard \"nightly\"",
            )),
            Some(Target::new("operator", odd)),
        ];
        for actor in &actors {
            for target in &targets {
                for (ip, count) in [
                    (None, None),
                    (Some("127.0.0.1"), None),
                    (Some("2001:db8::1"), Some(20_000)),
                    (None, Some(1)),
                ] {
                    for seq in [0, 1, 9, 10, 255, 1_000_000, u64::MAX] {
                        let unhashed = Unhashed {
                            action: "request.read",
                            actor,
                            at: "2026-11-23T14:00:00.000000Z",
                            count,
                            ip,
                            outcome: "denied",
                            prev_hash: super::super::GENESIS,
                            seq,
                            target: target.as_ref(),
                        };
                        let mut written = Vec::new();
                        unhashed.write(&mut written);
                        let reference = serde_json::to_vec(&unhashed).unwrap();
                        assert_eq!(
                            String::from_utf8(written).unwrap(),
                            String::from_utf8(reference).unwrap()
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn addresses_are_written_as_the_standard_library_writes_them() {
        let mut buf = [0; IP_TEXT];
        for text in [
            "0.0.0.0",
            "127.0.0.1",
            "10.20.30.40",
            "100.0.9.255",
            "255.255.255.255",
            "192.168.1.100",
            "::1",
            "2001:db8::8a2e:370:7334",
            "::ffff:192.0.2.128",
            "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255",
        ] {
            let address: IpAddr = text.parse().unwrap();
            assert_eq!(ip_text(address, &mut buf), address.to_string(), "{text}");
        }
    }
}
