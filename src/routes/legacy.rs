//! The legacy calls interface, past its 2026-10-01 sunset (service-interface 9.4): every route answers
//! 410 with the envelope naming its replacement, so old clients fail loudly and know where to go.

use actix_web::http::Method;
use actix_web::{web, HttpRequest, HttpResponse};

use crate::errors::{ApiError, Code};

/// One retired path: the methods it was documented with (any method answers 410) and, per method, what
/// replaces it.
pub(crate) struct Retired {
    /// The path, `{name}` for each parameter.
    pub path: &'static str,
    /// `(method, operation id, what it did, replacement)`.
    pub methods: &'static [(Method, &'static str, &'static str, &'static str)],
}

/// The retired interface.
pub(crate) const RETIRED: &[Retired] = &[
    Retired {
        path: "/v1/calls",
        methods: &[
            (
                Method::GET,
                "legacyListCalls",
                "list calls",
                "GET /v1/requests",
            ),
            (
                Method::POST,
                "legacyCreateCalls",
                "create calls",
                "POST /v1/requests",
            ),
        ],
    },
    Retired {
        path: "/v1/calls/{callId}",
        methods: &[(
            Method::GET,
            "legacyGetCall",
            "read a call",
            "GET /v1/requests/{requestId}",
        )],
    },
    Retired {
        path: "/v1/scripts",
        methods: &[(
            Method::GET,
            "legacyListScripts",
            "list scripts",
            "GET /v1/schemas",
        )],
    },
    Retired {
        path: "/v1/scripts/{scriptId}/required-inputs",
        methods: &[(
            Method::GET,
            "legacyRequiredInputs",
            "script required inputs",
            "GET /v1/schemas/{schemaId}/required-inputs",
        )],
    },
    Retired {
        path: "/v1/scripts/{scriptId}/required-payer-inputs",
        methods: &[(
            Method::POST,
            "legacyRequiredPayerInputs",
            "script required payer inputs",
            "POST /v1/schemas/{schemaId}/required-payer-inputs",
        )],
    },
];

/// Registers the legacy paths: every method of each answers 410.
pub fn configure(cfg: &mut web::ServiceConfig) {
    for retired in RETIRED {
        cfg.route(retired.path, web::route().to(gone));
    }
}

/// 410 naming the replacement of the method called, or of the path's first documented method.
async fn gone(req: HttpRequest) -> Result<HttpResponse, ApiError> {
    let pattern = req.match_pattern();
    let methods = RETIRED
        .iter()
        .find(|retired| Some(retired.path) == pattern.as_deref())
        .map_or(&[][..], |retired| retired.methods);
    let replacement = methods
        .iter()
        .find(|(method, ..)| method == req.method())
        .or(methods.first())
        .map_or("GET /v1/schemas", |(.., replacement)| replacement);
    Err(ApiError::new(
        Code::Gone,
        format!(
            "{} {} was retired on 2026-10-01; use {replacement} instead",
            req.method(),
            req.path()
        ),
    ))
}
