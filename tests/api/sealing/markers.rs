//! Unique values to plant in requests and look for on disk afterwards: names, member ids, internal ids and
//! tags no other test, fixture or library could contain by chance.

use rand::Rng;
use serde_json::{json, Value};

pub struct Markers {
    pub first_name: String,
    pub last_name: String,
    /// Seven digits: member ids are `W`, these, and two digits of their own.
    pub member_digits: String,
    pub internal_id: String,
    pub internal_tag: String,
    pub group_number: String,
    /// A path segment of a webhook URL (a URL can carry request data).
    pub webhook_path: String,
    /// The account's webhook signing secret: not PHI, but whoever reads it can sign webhooks.
    pub webhook_secret: String,
}

impl Markers {
    pub fn new() -> Markers {
        let mut rng = rand::thread_rng();
        let mut letters = |n: usize| -> String {
            (0..n)
                .map(|_| char::from(b'a' + rng.gen_range(0..26u8)))
                .collect()
        };
        let first_name = format!("Qzx{}", letters(9));
        let last_name = format!("Vqj{}", letters(9));
        let internal_id = format!("CLMPHI{}", letters(10));
        let internal_tag = format!("TAGPHI{}", letters(10));
        let webhook_path = format!("HOOKPHI{}", letters(10));
        let webhook_secret = format!("WHSECPHI{}", letters(10));
        let mut rng = rand::thread_rng();
        Markers {
            first_name,
            last_name,
            member_digits: format!("{:07}", rng.gen_range(1_000_000..9_999_999u32)),
            internal_id,
            internal_tag,
            group_number: format!("GRP{:07}", rng.gen_range(1_000_000..9_999_999u32)),
            webhook_path,
            webhook_secret,
        }
    }

    /// What a copy of the data must not reveal.
    pub fn all(&self) -> Vec<String> {
        vec![
            self.first_name.clone(),
            self.last_name.clone(),
            format!("W{}", self.member_digits),
            self.internal_id.clone(),
            self.internal_tag.clone(),
            self.group_number.clone(),
            self.webhook_path.clone(),
            self.webhook_secret.clone(),
        ]
    }

    /// A `claim-status-basic` request (UnitedHealthcare: electronic first, then the phone) carrying the
    /// markers, the `n`th of a run, with `sandboxScenario` when given.
    pub fn claim(&self, n: usize, scenario: Option<&str>) -> Value {
        let mut inputs = json!({
            "payerName": "UHC",
            "groupNumber": self.group_number,
            "memberId": format!("W{}{:02}", self.member_digits, n),
            "patientFirstName": self.first_name,
            "patientLastName": self.last_name,
            "patientDateOfBirth": "1980-04-12",
            "dateOfService": "2026-10-01",
            "billingProviderNpi": "1234567890",
            "billingProviderTaxId": "12-3456789",
        });
        if let Some(scenario) = scenario {
            inputs["sandboxScenario"] = json!(scenario);
        }
        json!({
            "schemaId": "claim-status-basic",
            "inputs": inputs,
            "internalId": format!("{}-{n}", self.internal_id),
            "internalTag": self.internal_tag,
        })
    }

    /// A `vob-basic` request (Aetna, dialing a given number) carrying the markers.
    pub fn vob(&self, n: usize) -> Value {
        json!({
            "schemaId": "vob-basic",
            "inputs": {
                "payerName": "Aetna", "phoneNumber": "(800) 555-0123",
                "memberId": format!("W{}{:02}", self.member_digits, n),
                "patientFirstName": self.first_name, "patientLastName": self.last_name,
                "patientDateOfBirth": "1980-01-02", "billingProviderNpi": "1234567890"
            },
            "internalId": format!("{}-{n}", self.internal_id),
            "internalTag": self.internal_tag,
        })
    }
}
