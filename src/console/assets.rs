//! The console's static files, embedded in the binary so the console works offline and never drifts from
//! the server it ships with.
//!
//! The file names carry no content hash, so every response says `Cache-Control: no-cache` and carries a
//! strong `ETag`: a browser revalidates on each load and gets a bodiless 304 while the binary is unchanged.

use std::sync::OnceLock;

use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, HttpResponse};
use sha2::{Digest, Sha256};

/// One embedded file.
pub struct Asset {
    /// Path under `/console/`.
    pub name: &'static str,
    /// `Content-Type`.
    pub content_type: &'static str,
    /// The bytes.
    pub body: &'static [u8],
}

/// Every file of the console. `index.html` is also served at `/console` and `/console/`.
pub const ASSETS: &[Asset] = &[
    asset(
        "index.html",
        "text/html; charset=utf-8",
        include_bytes!("assets/index.html"),
    ),
    asset(
        "app.css",
        "text/css; charset=utf-8",
        include_bytes!("assets/app.css"),
    ),
    asset("app.js", JS, include_bytes!("assets/app.js")),
    asset("api.js", JS, include_bytes!("assets/api.js")),
    asset("ui.js", JS, include_bytes!("assets/ui.js")),
    asset("signin.js", JS, include_bytes!("assets/signin.js")),
    asset("list.js", JS, include_bytes!("assets/list.js")),
    asset("detail.js", JS, include_bytes!("assets/detail.js")),
    asset("schedule.js", JS, include_bytes!("assets/schedule.js")),
    asset("create.js", JS, include_bytes!("assets/create.js")),
    asset("queue.js", JS, include_bytes!("assets/queue.js")),
    asset("payers.js", JS, include_bytes!("assets/payers.js")),
];

const JS: &str = "text/javascript; charset=utf-8";

const fn asset(name: &'static str, content_type: &'static str, body: &'static [u8]) -> Asset {
    Asset {
        name,
        content_type,
        body,
    }
}

/// Scripts, styles, media and API calls all come from this origin; nothing may frame the console.
const CONTENT_SECURITY_POLICY: &str =
    "default-src 'self'; img-src 'self' data:; media-src 'self'; \
     style-src 'self'; script-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; \
     frame-ancestors 'none'";

/// The asset named `name`.
pub fn find(name: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|a| a.name == name)
}

/// The response for `asset`: 304 when the browser's copy is current, else the bytes.
pub fn serve(req: &HttpRequest, asset: &'static Asset) -> HttpResponse {
    let etag = etag(asset);
    let current = req
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(',')
                .any(|tag| tag.trim() == etag || tag.trim() == "*")
        });
    let mut builder = if current {
        HttpResponse::NotModified()
    } else {
        HttpResponse::Ok()
    };
    builder
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-cache")))
        .insert_header((header::ETAG, etag))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::REFERRER_POLICY, "no-referrer"));
    if asset.name == "index.html" {
        builder.insert_header((header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY));
    }
    if current {
        return builder.finish();
    }
    builder.content_type(asset.content_type).body(asset.body)
}

/// `"sha256-prefix"`, computed once per asset.
fn etag(asset: &'static Asset) -> &'static str {
    static TAGS: OnceLock<Vec<String>> = OnceLock::new();
    let tags = TAGS.get_or_init(|| {
        ASSETS
            .iter()
            .map(|a| format!("\"{}\"", hex::encode(&Sha256::digest(a.body)[..12])))
            .collect()
    });
    let index = ASSETS
        .iter()
        .position(|a| a.name == asset.name)
        .expect("assets come from the table");
    &tags[index]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_asset_is_named_once_and_the_whole_console_stays_small() {
        let mut names: Vec<&str> = ASSETS.iter().map(|a| a.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ASSETS.len());
        let total: usize = ASSETS.iter().map(|a| a.body.len()).sum();
        assert!(total < 200 * 1024, "console weighs {total} bytes");
    }

    #[test]
    fn the_page_loads_only_embedded_scripts_and_styles() {
        let index = std::str::from_utf8(find("index.html").unwrap().body).unwrap();
        for needle in ["http://", "https://", "//cdn"] {
            assert!(!index.contains(needle), "index.html references {needle}");
        }
        let import = regex::Regex::new(r#"from\s+['"]\./([^'"]+)['"]"#).unwrap();
        let mut imports = 0;
        for asset in ASSETS.iter().filter(|a| a.name.ends_with(".js")) {
            let text = std::str::from_utf8(asset.body).unwrap();
            for found in import.captures_iter(text) {
                let file = &found[1];
                assert!(
                    find(file).is_some(),
                    "{} imports missing {file}",
                    asset.name
                );
                imports += 1;
            }
        }
        assert!(
            imports >= 6,
            "app.js alone imports six modules; found {imports}"
        );
    }
}
