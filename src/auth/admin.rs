//! The [`Admin`] extractor: the operator's admin token.

use std::future::{ready, Ready};

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{web, FromRequest, HttpRequest};

use super::constant_time_eq;
use crate::errors::AdminUnauthorized;
use crate::state::AppState;

/// Proof that the request carries `server.admin_token`. API bearer tokens are never accepted here.
#[derive(Clone, Copy, Debug)]
pub struct Admin;

impl FromRequest for Admin {
    type Error = AdminUnauthorized;
    type Future = Ready<Result<Admin, AdminUnauthorized>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let expected = req
            .app_data::<web::Data<AppState>>()
            .and_then(|state| state.settings.server.admin_token.clone());
        let presented = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            })
            .map(str::trim);
        let allowed = matches!((expected, presented), (Some(expected), Some(presented))
            if constant_time_eq(expected.expose().as_bytes(), presented.as_bytes()));
        ready(if allowed {
            Ok(Admin)
        } else {
            Err(AdminUnauthorized)
        })
    }
}
