//! Call recordings: signed, expiring download links and the audio behind them.
//!
//! A `recordingDownloadUrl` is `{public_url}/v1/recordings/{callId}?expires=UNIX&signature=HEX`, signed
//! with HMAC-SHA256 under the server's key. Anyone holding the link may download until it expires; a
//! changed call id, expiry or signature is refused. A real call's recording is the file downloaded from its
//! platform; a simulated call's audio is generated: a short, deterministic WAV per call (a dial tone, a ring
//! and a voice-band tone whose pitch depends on the call id), so players and downloads behave as with a
//! real recording.

use chrono::{DateTime, Duration, Utc};
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use switchboard_storage::CallId;

use crate::auth::constant_time_eq;

/// How long a link stays valid after the read that produced it.
pub const LINK_LIFETIME: Duration = Duration::hours(1);

/// Signs and checks recording links.
#[derive(Clone)]
pub struct RecordingLinks {
    key: Vec<u8>,
    public_url: String,
}

impl RecordingLinks {
    /// Links under `public_url`, signed with `key`.
    pub fn new(key: &[u8], public_url: &str) -> RecordingLinks {
        RecordingLinks {
            key: key.to_vec(),
            public_url: public_url.trim_end_matches('/').to_owned(),
        }
    }

    /// A link to `call_id`'s recording valid until `now + LINK_LIFETIME`.
    pub fn url(&self, call_id: &CallId, now: DateTime<Utc>) -> String {
        let expires = (now + LINK_LIFETIME).timestamp();
        format!(
            "{}/v1/recordings/{call_id}?expires={expires}&signature={}",
            self.public_url,
            self.signature(call_id, expires)
        )
    }

    /// Whether a presented link is authentic and unexpired at `now`.
    pub fn verify(
        &self,
        call_id: &CallId,
        expires: i64,
        signature: &str,
        now: DateTime<Utc>,
    ) -> bool {
        let authentic = constant_time_eq(
            self.signature(call_id, expires).as_bytes(),
            signature.as_bytes(),
        );
        authentic && now.timestamp() < expires
    }

    fn signature(&self, call_id: &CallId, expires: i64) -> String {
        let mut mac =
            Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes keys of any length");
        mac.update(b"recording:");
        mac.update(call_id.as_bytes());
        mac.update(b":");
        mac.update(expires.to_string().as_bytes());
        hex::encode(mac.finalize().into_bytes())
    }
}

/// A generated 8 kHz, 16-bit mono WAV of a few seconds for `call_id`.
pub fn synthesize(call_id: &CallId, duration_seconds: u32) -> Vec<u8> {
    const RATE: u32 = 8_000;
    let seconds = duration_seconds.clamp(2, 6);
    let digest = Sha256::digest(call_id.as_bytes());
    let voice_hz = 180.0 + f64::from(digest[0]) * 1.5;
    let samples = RATE * seconds;
    let mut pcm = Vec::with_capacity(samples as usize * 2);
    for n in 0..samples {
        let t = f64::from(n) / f64::from(RATE);
        let value = if t < 0.8 {
            // North American dial tone: 350 Hz + 440 Hz.
            0.25 * ((2.0 * std::f64::consts::PI * 350.0 * t).sin()
                + (2.0 * std::f64::consts::PI * 440.0 * t).sin())
        } else if t < 1.6 {
            // Ringback: 440 Hz + 480 Hz.
            0.25 * ((2.0 * std::f64::consts::PI * 440.0 * t).sin()
                + (2.0 * std::f64::consts::PI * 480.0 * t).sin())
        } else {
            // A voice-band tone with a slow syllable-like envelope.
            let envelope = (2.0 * std::f64::consts::PI * 3.0 * t).sin().abs();
            0.4 * envelope * (2.0 * std::f64::consts::PI * voice_hz * t).sin()
        };
        pcm.extend_from_slice(&((value * f64::from(i16::MAX)) as i16).to_le_bytes());
    }
    let mut wav = Vec::with_capacity(44 + pcm.len());
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + pcm.len() as u32).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes());
    wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1u16.to_le_bytes()); // mono
    wav.extend_from_slice(&RATE.to_le_bytes());
    wav.extend_from_slice(&(RATE * 2).to_le_bytes());
    wav.extend_from_slice(&2u16.to_le_bytes());
    wav.extend_from_slice(&16u16.to_le_bytes());
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&(pcm.len() as u32).to_le_bytes());
    wav.extend_from_slice(&pcm);
    wav
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        "2026-11-23T14:00:00Z".parse().unwrap()
    }

    #[test]
    fn a_link_verifies_until_it_expires_and_not_when_altered() {
        let links = RecordingLinks::new(b"k", "http://127.0.0.1:8080/");
        let url = links.url(&"call-1".into(), now());
        let expires = (now() + LINK_LIFETIME).timestamp();
        let signature = url.rsplit_once("signature=").unwrap().1;
        assert!(url.starts_with("http://127.0.0.1:8080/v1/recordings/call-1?expires="));
        assert!(links.verify(&"call-1".into(), expires, signature, now()));
        assert!(
            !links.verify(&"call-1".into(), expires, signature, now() + LINK_LIFETIME),
            "expired"
        );
        assert!(
            !links.verify(&"call-2".into(), expires, signature, now()),
            "other call"
        );
        assert!(
            !links.verify(&"call-1".into(), expires + 60, signature, now()),
            "extended expiry"
        );
        assert!(
            !links.verify(&"call-1".into(), expires, "00", now()),
            "forged signature"
        );
    }

    #[test]
    fn the_audio_is_a_valid_deterministic_wav() {
        let wav = synthesize(&"call-1".into(), 3);
        assert_eq!(&wav[..4], b"RIFF");
        assert_eq!(&wav[8..16], b"WAVEfmt ");
        assert_eq!(wav.len(), 44 + 8_000 * 3 * 2);
        assert_eq!(wav, synthesize(&"call-1".into(), 3));
        assert_ne!(wav, synthesize(&"call-2".into(), 3));
    }
}
