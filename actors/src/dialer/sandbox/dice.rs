//! The deterministic dice every sandbox choice is rolled with: SHA-256 over `simulation.seed`, the
//! request's inputs, the step and the attempt, then over the label of each roll. Also the generated
//! identities that several answers and the dialogue share (reference numbers, representatives' names).

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

const CODE_CHARS: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
pub(super) const FIRST_NAMES: [&str; 16] = [
    "Dana", "Marcus", "Priya", "Luis", "Keisha", "Tom", "Aisha", "Brian", "Mei", "Carlos",
    "Rachel", "Andre", "Nicole", "Omar", "Jenna", "Victor",
];
pub(super) const LAST_NAMES: [&str; 12] = [
    "Ellis", "Nguyen", "Patel", "Ramirez", "Brooks", "Okafor", "Kim", "Sullivan", "Haddad",
    "Foster", "Moreno", "Walsh",
];

/// Deterministic dice: SHA-256 over the seed, the request's inputs (sorted), the step and the attempt,
/// then over the label of each roll.
#[derive(Clone)]
pub(crate) struct Dice {
    base: Sha256,
}

impl Dice {
    /// Dice for one call (or, with step 0 and attempt 1, for the electronic channel).
    pub(crate) fn new(
        seed: u64,
        inputs: &BTreeMap<String, String>,
        step: usize,
        attempt: u32,
    ) -> Dice {
        let mut base = Sha256::new();
        base.update(seed.to_le_bytes());
        for (key, value) in inputs {
            base.update((key.len() as u64).to_le_bytes());
            base.update(key.as_bytes());
            base.update((value.len() as u64).to_le_bytes());
            base.update(value.as_bytes());
        }
        base.update((step as u64).to_le_bytes());
        base.update(attempt.to_le_bytes());
        Dice { base }
    }

    /// A number in `0..n` (0 when `n` is 0), fixed by the dice and `label`.
    pub(crate) fn pick(&self, label: &str, n: u64) -> u64 {
        let mut hasher = self.base.clone();
        hasher.update(label.as_bytes());
        let digest = hasher.finalize();
        let mut word = [0u8; 8];
        word.copy_from_slice(&digest[..8]);
        u64::from_le_bytes(word).checked_rem(n).unwrap_or(0)
    }

    /// A number in `lo..=hi`.
    pub(crate) fn range(&self, label: &str, lo: u64, hi: u64) -> u64 {
        lo + self.pick(label, hi.saturating_sub(lo) + 1)
    }

    /// One of `items` (which must not be empty).
    pub(crate) fn choose<'a, T>(&self, label: &str, items: &'a [T]) -> &'a T {
        &items[self.pick(label, items.len() as u64) as usize]
    }

    pub(crate) fn digits(&self, label: &str, count: usize) -> String {
        (0..count)
            .map(|i| char::from(b'0' + self.pick(&format!("{label}#{i}"), 10) as u8))
            .collect()
    }

    pub(super) fn code(&self, label: &str, count: usize) -> String {
        (0..count)
            .map(|i| char::from(*self.choose(&format!("{label}#{i}"), CODE_CHARS)))
            .collect()
    }
}

/// A call reference number such as `REF-4K7Q2P`.
pub(crate) fn reference_number(dice: &Dice, label: &str) -> String {
    format!("REF-{}", dice.code(label, 6))
}

/// A representative's name as given on a call.
pub(crate) fn representative_name(dice: &Dice) -> String {
    let first = dice.choose("rep:first", &FIRST_NAMES);
    let last = dice.choose("rep:last", &LAST_NAMES);
    format!("{first} {last}")
}
