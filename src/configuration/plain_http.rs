//! The links over which Switchboard sends patient data to someone else (the voice agent or platform, the
//! clearinghouse), checked for plain `http` to another machine. Tests and local fakes use plain `http` on
//! this machine, so the configuration accepts it; a start warns about anything else.

use url::{Host, Url};

use super::{DialerSettings, ElectronicSettings, Settings};

impl Settings {
    /// The configuration keys of links that would carry patient data over plain `http` to a host other
    /// than this machine, each with that host.
    pub fn plain_http_links(&self) -> Vec<(&'static str, String)> {
        let mut links = Vec::new();
        for dialer in std::iter::once(&self.dialer).chain(&self.dialers) {
            let (key, url) = match dialer {
                DialerSettings::Http { url, .. } => ("dialer.url", url),
                DialerSettings::Retell(retell) => ("dialer.retell.base_url", &retell.base_url),
                DialerSettings::Vapi(vapi) => ("dialer.vapi.base_url", &vapi.base_url),
                DialerSettings::Simulated => continue,
            };
            links.extend(plain_to_another_machine(url).map(|host| (key, host)));
        }
        if let ElectronicSettings::Stedi(stedi) = &self.electronic {
            let host = plain_to_another_machine(&stedi.base_url);
            links.extend(host.map(|host| ("electronic.stedi.base_url", host)));
        }
        links.sort();
        links.dedup();
        links
    }
}

/// The host of `url` when it is plain `http` to a host that is not this machine.
fn plain_to_another_machine(url: &Url) -> Option<String> {
    if url.scheme() != "http" {
        return None;
    }
    let here = match url.host()? {
        Host::Ipv4(address) => address.is_loopback(),
        Host::Ipv6(address) => address.is_loopback(),
        Host::Domain(name) => name.eq_ignore_ascii_case("localhost"),
    };
    (!here).then(|| url.host_str().unwrap_or_default().to_owned())
}

#[cfg(test)]
mod tests {
    use super::super::{from_toml_str, Overrides};

    fn links(toml_text: &str) -> Vec<(&'static str, String)> {
        from_toml_str(toml_text, "test.toml", &Overrides::default())
            .unwrap()
            .plain_http_links()
    }

    #[test]
    fn plain_http_to_another_machine_is_named_and_this_machine_or_https_is_not() {
        let retell = |base_url: &str| {
            format!(
                "[dialer]\nkind = \"retell\"\n[dialer.retell]\napi_key = \"k\"\nagent_id = \"a\"\n\
                 from_number = \"+14155550100\"\nbase_url = \"{base_url}\"\n"
            )
        };
        assert_eq!(
            links(&retell("http://voice.internal:8080")),
            [("dialer.retell.base_url", "voice.internal".to_owned())]
        );
        for here in [
            "http://127.0.0.1:8080",
            "http://localhost:9",
            "http://[::1]:9",
            "https://api.retellai.com",
        ] {
            assert!(links(&retell(here)).is_empty(), "{here}");
        }
        let stedi = "[electronic]\nkind = \"stedi\"\n[electronic.stedi]\napi_key = \"k\"\n\
                     base_url = \"http://10.0.0.7/stedi\"\n";
        assert_eq!(
            links(stedi),
            [("electronic.stedi.base_url", "10.0.0.7".to_owned())]
        );
        assert!(
            links("").is_empty(),
            "the simulator and the default clearinghouse"
        );
    }
}
