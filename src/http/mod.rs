//! HTTP helpers shared by the client API (`routes/`) and the console (`console/`): resources whose wrong
//! methods answer 405, the strict `YYYY-MM-DD` query dates and the signed page tokens of listings. Both
//! sides import from here, so neither imports the other for them.

mod dates;
pub(crate) mod page_token;
mod resource;

pub(crate) use dates::parse_day;
pub use resource::not_found;
pub(crate) use resource::{resource, route_label, RoutePattern, ServedResource};
