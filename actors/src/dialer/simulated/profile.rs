//! Per-payer phone-line behaviour: which family a payer belongs to (read from its name), that family's
//! baseline rates and a small per-payer variation hashed from the normalized name, so two Blue plans or two
//! Medicare contractors behave alike but not identically.

use sha2::{Digest, Sha256};

/// The kind of payer a name belongs to; each family has its own baseline [`PayerProfile`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PayerFamily {
    /// CMS and the Medicare Administrative Contractors (Novitas, Noridian, Palmetto GBA, NGS, First Coast,
    /// WPS, CGS): long holds, and provider lines that insist on the PTAN.
    MedicareContractor,
    /// State fee-for-service Medicaid programs: deep phone trees that often loop, frequent after-hours lines.
    Medicaid,
    /// Blue Cross Blue Shield plans: often refer the caller to the member's home plan (BlueCard).
    BlueCrossBlueShield,
    /// Large national carriers (UnitedHealthcare, Aetna, Cigna, Humana, Kaiser, their TPAs): moderate holds.
    NationalCarrier,
    /// Medicaid and marketplace managed-care organizations (Molina, Centene, WellCare, CareSource, ...).
    ManagedCare,
    /// Regional and provider-sponsored plans: short holds, few surprises.
    Regional,
    /// TRICARE regions: long holds and strict sponsor verification.
    Military,
    /// A name no rule recognises: a middle-of-the-road profile.
    Unknown,
}

/// Words that name a family when they appear as whole words of the normalized name.
const MEDICAID_WORDS: [&str; 7] = [
    "medicaid",
    "tmhp",
    "emedny",
    "masshealth",
    "ahcccs",
    "hfs",
    "promise",
];
const MAC_WORDS: [&str; 8] = [
    "novitas",
    "noridian",
    "palmetto",
    "ngs",
    "wps",
    "cgs",
    "cms",
    "jurisdiction",
];
const BLUE_WORDS: [&str; 8] = [
    "blue",
    "bluecross",
    "blueshield",
    "anthem",
    "highmark",
    "regence",
    "premera",
    "carefirst",
];
const NATIONAL_WORDS: [&str; 12] = [
    "unitedhealthcare",
    "uhc",
    "aetna",
    "cigna",
    "humana",
    "kaiser",
    "kp",
    "umr",
    "meritain",
    "oscar",
    "geha",
    "optum",
];
const MANAGED_WORDS: [&str; 9] = [
    "molina",
    "centene",
    "ambetter",
    "wellcare",
    "caresource",
    "amerigroup",
    "healthnet",
    "clover",
    "devoted",
];
const REGIONAL_WORDS: [&str; 9] = [
    "pilgrim",
    "tufts",
    "priority",
    "mutual",
    "geisinger",
    "upmc",
    "healthpartners",
    "selecthealth",
    "emblemhealth",
];

/// Lower-case words of `name`, every run of other characters a single space ("Medi-Cal" → "medi cal").
pub fn normalize_payer_name(name: &str) -> String {
    name.to_ascii_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

impl PayerFamily {
    /// The family of a payer by its name (any spelling or alias; unrecognised names are [`Self::Unknown`]).
    /// More specific rules win: "TRICARE For Life WPS" is military, "Humana Medicare" a national carrier,
    /// "Medicare Part B - Novitas" and plain "Medicare" Medicare contractors.
    pub fn of(payer_name: &str) -> PayerFamily {
        let name = normalize_payer_name(payer_name);
        let words: Vec<&str> = name.split(' ').collect();
        let word = |list: &[&str]| words.iter().any(|w| list.contains(w));
        let phrase = |list: &[&str]| {
            list.iter()
                .any(|p| format!(" {name} ").contains(&format!(" {p} ")))
        };
        if word(&["tricare", "triwest"]) || phrase(&["humana military"]) {
            PayerFamily::Military
        } else if word(&MEDICAID_WORDS)
            || name == "medical"
            || phrase(&["medi cal", "medical assistance"])
        {
            PayerFamily::Medicaid
        } else if word(&MAC_WORDS)
            || phrase(&[
                "first coast",
                "national government services",
                "medicare part",
            ])
        {
            PayerFamily::MedicareContractor
        } else if word(&BLUE_WORDS) || words.iter().any(|w| w.starts_with("bcbs")) {
            PayerFamily::BlueCrossBlueShield
        } else if word(&NATIONAL_WORDS)
            || phrase(&[
                "united healthcare",
                "united health care",
                "united medical resources",
            ])
        {
            PayerFamily::NationalCarrier
        } else if word(&MANAGED_WORDS) || phrase(&["well care", "health net"]) {
            PayerFamily::ManagedCare
        } else if word(&REGIONAL_WORDS) || phrase(&["select health", "emblem health"]) {
            PayerFamily::Regional
        } else if word(&["medicare"]) {
            PayerFamily::MedicareContractor
        } else {
            PayerFamily::Unknown
        }
    }
}

/// Behaviour of one payer's phone line. Every rate is the chance, per call, of that event at its stage of
/// the call (see the module documentation for the order the stages are rolled in).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PayerProfile {
    /// The phone tree loops or rejects the agent's entries and no representative is reached.
    pub ivr_failure_rate: f64,
    /// Median time on hold before a representative answers, in minutes.
    pub hold_minutes_median: f64,
    /// The hold exceeds the agent's hold limit.
    pub hold_timeout_rate: f64,
    /// Only voicemail or an after-hours message.
    pub voicemail_rate: f64,
    /// The representative refuses to release the information (HIPAA verification, privacy policy).
    pub refusal_rate: f64,
    /// The representative gives another number to call (another department, a Blue home plan).
    pub referral_rate: f64,
    /// The member, provider or claim is not in the payer's records.
    pub not_found_rate: f64,
    /// The representative requires an input the request did not supply (only rolled when it is absent).
    pub missing_input_rate: f64,
    /// The number reaches the wrong department (much likelier on a number a representative gave out).
    pub wrong_number_rate: f64,
}

/// Bounds of the per-payer variation: every rate and the median hold are scaled by a factor in this range.
const VARIATION: (f64, f64) = (0.85, 1.15);

impl PayerProfile {
    /// The baseline of a family, before per-payer variation.
    pub fn baseline(family: PayerFamily) -> PayerProfile {
        // ivr, hold median, hold timeout, voicemail, refusal, referral, not found, missing input, wrong number
        let (i, h, t, v, r, f, n, m, w) = match family {
            PayerFamily::MedicareContractor => {
                (0.02, 32.0, 0.18, 0.02, 0.02, 0.03, 0.03, 0.60, 0.005)
            }
            PayerFamily::Medicaid => (0.08, 22.0, 0.09, 0.06, 0.03, 0.04, 0.04, 0.06, 0.01),
            PayerFamily::BlueCrossBlueShield => {
                (0.03, 15.0, 0.06, 0.03, 0.03, 0.16, 0.04, 0.06, 0.01)
            }
            PayerFamily::NationalCarrier => (0.03, 13.0, 0.08, 0.03, 0.03, 0.04, 0.05, 0.06, 0.01),
            PayerFamily::ManagedCare => (0.04, 19.0, 0.08, 0.04, 0.03, 0.06, 0.04, 0.06, 0.015),
            PayerFamily::Regional => (0.015, 9.0, 0.04, 0.04, 0.02, 0.03, 0.03, 0.04, 0.01),
            PayerFamily::Military => (0.03, 24.0, 0.10, 0.02, 0.04, 0.04, 0.03, 0.10, 0.005),
            PayerFamily::Unknown => (0.03, 17.0, 0.07, 0.04, 0.03, 0.05, 0.04, 0.06, 0.015),
        };
        PayerProfile {
            ivr_failure_rate: i,
            hold_minutes_median: h,
            hold_timeout_rate: t,
            voicemail_rate: v,
            refusal_rate: r,
            referral_rate: f,
            not_found_rate: n,
            missing_input_rate: m,
            wrong_number_rate: w,
        }
    }

    /// The profile of a payer: its family's baseline (see [`PayerFamily::of`]), each value scaled by a
    /// factor in 0.85-1.15 hashed from the normalized name. Deterministic: the same name (in any case or
    /// punctuation) always gets the same profile.
    pub fn for_payer(payer_name: &str) -> PayerProfile {
        let base = PayerProfile::baseline(PayerFamily::of(payer_name));
        let digest = Sha256::digest(format!(
            "payer-profile:{}",
            normalize_payer_name(payer_name)
        ));
        let factor = |i: usize| {
            let word = u16::from_le_bytes([digest[2 * i], digest[2 * i + 1]]);
            VARIATION.0 + (VARIATION.1 - VARIATION.0) * f64::from(word) / f64::from(u16::MAX)
        };
        let rate = |value: f64, i: usize| (value * factor(i)).clamp(0.0, 1.0);
        PayerProfile {
            ivr_failure_rate: rate(base.ivr_failure_rate, 0),
            hold_minutes_median: base.hold_minutes_median * factor(1),
            hold_timeout_rate: rate(base.hold_timeout_rate, 2),
            voicemail_rate: rate(base.voicemail_rate, 3),
            refusal_rate: rate(base.refusal_rate, 4),
            referral_rate: rate(base.referral_rate, 5),
            not_found_rate: rate(base.not_found_rate, 6),
            missing_input_rate: rate(base.missing_input_rate, 7),
            wrong_number_rate: rate(base.wrong_number_rate, 8),
        }
    }

    /// The profile of a follow-up leg: a second call about a member and claim the payer already found, so
    /// lookups rarely fail, referrals are rare and the rest fails about half as often.
    pub fn for_follow_up(&self) -> PayerProfile {
        PayerProfile {
            ivr_failure_rate: self.ivr_failure_rate * 0.5,
            hold_minutes_median: self.hold_minutes_median,
            hold_timeout_rate: self.hold_timeout_rate * 0.6,
            voicemail_rate: self.voicemail_rate * 0.6,
            refusal_rate: self.refusal_rate * 0.5,
            referral_rate: self.referral_rate * 0.25,
            not_found_rate: self.not_found_rate * 0.25,
            missing_input_rate: self.missing_input_rate * 0.25,
            wrong_number_rate: self.wrong_number_rate * 0.5,
        }
    }
}
