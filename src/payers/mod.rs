//! The payer directory and name matching (service-interface 2.5, 4.5).
//!
//! Clients write payer names every way: "UHC", "United Health Care", "BCBS TX", "Aetna Inc". A name is
//! matched against every directory name and alias in [`normalize`]d form; the best candidate must clear a
//! confidence threshold and beat the runner-up clearly, or there is no match (a wrong number dialed is
//! worse than a `PAYER_NOT_FOUND`). For the regional-plan family, a member ID's plan prefix picks the plan.

mod normalize;

pub use normalize::{is_family, normalize, NameForm};

use std::collections::HashMap;

use crate::memo::Memo;
use switchboard_storage::PayerRecord;

/// Lowest score accepted as a match.
const THRESHOLD: f64 = 0.8;
/// How far the best candidate must lead the runner-up.
const MARGIN: f64 = 0.04;

/// How a match was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchVia {
    /// The name (or an alias) matched.
    Name,
    /// A regional-plan family name plus the member ID's plan prefix.
    MemberIdPrefix,
}

/// A resolved payer.
#[derive(Clone, Debug, PartialEq)]
pub struct PayerMatch<'a> {
    /// The directory entry.
    pub payer: &'a PayerRecord,
    /// 0 to 1.
    pub confidence: f64,
    /// Name or member-ID prefix.
    pub via: MatchVia,
}

/// A normalized name as a map key: its compact form and its tokens.
type NameKey = (String, Vec<String>);

struct Entry {
    payer: PayerRecord,
    forms: Vec<NameForm>,
}

/// The directory, indexed for matching. Built from the store; rebuilt when a payer changes.
pub struct PayerDirectory {
    entries: Vec<Entry>,
    /// Inverse document frequency of each token: "health" and "blue" say little, "emblem" a lot.
    weights: HashMap<String, f64>,
    /// Weight of a token no payer uses.
    unknown_weight: f64,
    /// The name-matching verdict per normalized name (entry index and confidence): clients send the same
    /// few names over and over, and scoring one against every directory form costs tens of microseconds.
    /// Lives and dies with this index, which is rebuilt when a payer changes.
    verdicts: Memo<NameKey, Option<(usize, f64)>>,
}

impl PayerDirectory {
    /// Indexes `payers`.
    pub fn new(payers: Vec<PayerRecord>) -> PayerDirectory {
        let entries = payers
            .into_iter()
            .map(|payer| {
                let forms = std::iter::once(&payer.name)
                    .chain(payer.aliases.iter())
                    .map(|n| normalize(n))
                    .collect();
                Entry { payer, forms }
            })
            .collect::<Vec<Entry>>();
        let mut document_frequency: HashMap<String, usize> = HashMap::new();
        for entry in &entries {
            let mut tokens: Vec<&String> =
                entry.forms.iter().flat_map(|f| f.tokens.iter()).collect();
            tokens.sort();
            tokens.dedup();
            for token in tokens {
                *document_frequency.entry(token.clone()).or_default() += 1;
            }
        }
        let n = entries.len().max(1) as f64;
        let weights = document_frequency
            .into_iter()
            .map(|(token, df)| (token, 1.0 + (n / df as f64).ln()))
            .collect();
        PayerDirectory {
            entries,
            weights,
            unknown_weight: 1.0 + n.ln(),
            verdicts: Memo::new(),
        }
    }

    /// Number of payers.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the directory is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The payer `name` refers to, steered by `member_id` within the regional-plan family.
    pub fn resolve(&self, name: &str, member_id: Option<&str>) -> Option<PayerMatch<'_>> {
        let query = normalize(name);
        if query.compact.is_empty() {
            return None;
        }
        if is_family(&query) {
            if let Some(found) = member_id.and_then(|id| self.by_member_prefix(id)) {
                return Some(found);
            }
        }
        let (index, confidence) = self.by_name(query)?;
        Some(PayerMatch {
            payer: &self.entries[index].payer,
            confidence,
            via: MatchVia::Name,
        })
    }

    /// The entry a normalized name designates, with the confidence, remembered per name.
    fn by_name(&self, query: NameForm) -> Option<(usize, f64)> {
        let key = (
            query.compact.clone(),
            query.tokens.iter().cloned().collect(),
        );
        self.verdicts
            .get_or_compute(key, |_| self.score_all(&query))
    }

    fn score_all(&self, query: &NameForm) -> Option<(usize, f64)> {
        let mut scored: Vec<(f64, usize)> = self
            .entries
            .iter()
            .enumerate()
            .map(|(index, entry)| {
                (
                    entry
                        .forms
                        .iter()
                        .map(|form| self.score(query, form))
                        .fold(0.0, f64::max),
                    index,
                )
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        let (best, index) = *scored.first()?;
        let runner_up = scored.get(1).map_or(0.0, |s| s.0);
        if best < THRESHOLD || best - runner_up < MARGIN {
            return None;
        }
        Some((index, best))
    }

    /// Similarity of two normalized names, 0 to 1: identical compact forms are 1; otherwise the better of
    /// token overlap weighted by rarity (word order free) and character similarity of the compact forms
    /// (typos, run-together words).
    pub fn score(&self, query: &NameForm, candidate: &NameForm) -> f64 {
        if query.compact == candidate.compact {
            return 1.0;
        }
        let weight = |t: &String| self.weights.get(t).copied().unwrap_or(self.unknown_weight);
        let shared: f64 = query
            .tokens
            .intersection(&candidate.tokens)
            .map(weight)
            .sum();
        let total: f64 = query.tokens.iter().map(weight).sum::<f64>()
            + candidate.tokens.iter().map(weight).sum::<f64>();
        let dice = if total > 0.0 {
            2.0 * shared / total
        } else {
            0.0
        };
        let same_tokens = if query.tokens == candidate.tokens {
            0.99
        } else {
            0.0
        };
        // Spelling similarity is for typos only: short strings (acronyms) must match exactly, and a name
        // that is the start of another ("United", "Blue Cross Blue Shield") is a truncation, not a typo.
        let (q, c) = (query.compact.as_str(), candidate.compact.as_str());
        let (short, long) = (q.len().min(c.len()), q.len().max(c.len()));
        let truncation = q.starts_with(c) || c.starts_with(q);
        let spelling = if short >= 5 && short * 10 >= long * 8 && !truncation {
            strsim::jaro_winkler(q, c) * 0.97
        } else {
            0.0
        };
        dice.max(same_tokens).max(spelling)
    }

    fn by_member_prefix(&self, member_id: &str) -> Option<PayerMatch<'_>> {
        let prefix: String = member_id
            .trim()
            .chars()
            .take(3)
            .collect::<String>()
            .to_uppercase();
        if prefix.len() < 3 {
            return None;
        }
        let mut hits = self
            .entries
            .iter()
            .filter(|e| e.payer.member_id_prefixes.contains(&prefix));
        let hit = hits.next()?;
        // A prefix claimed by two plans says nothing.
        if hits.next().is_some() {
            return None;
        }
        Some(PayerMatch {
            payer: &hit.payer,
            confidence: 1.0,
            via: MatchVia::MemberIdPrefix,
        })
    }
}

#[cfg(test)]
mod tests;
