//! The router's own answers: 404 for an unknown path, and 405 with an `Allow` header (RFC 9110 section
//! 15.5.6) for a known path asked with a method it does not serve. Every GET also serves HEAD.

use actix_web::dev::{AppService, HttpServiceFactory, Service};
use actix_web::http::{header, Method};
use actix_web::{
    guard, web, FromRequest, Handler, HttpRequest, HttpResponse, Resource, Responder, Route,
};

use std::borrow::Cow;
use std::time::Duration;

use switchboard_actors::metrics::{HttpSeries, Metrics, UNMATCHED_ROUTE};

use crate::errors::{ApiError, Code};

/// The default service: no route matched.
pub async fn not_found(req: HttpRequest) -> Result<HttpResponse, ApiError> {
    Err(ApiError::new(
        Code::NotFound,
        format!("No route matches {} {}", req.method(), req.path()),
    ))
}

/// A resource whose unmatched methods answer 405 naming the methods it serves. Without an explicit
/// default, a resource inherits the app's default service and a wrong method would look like a missing
/// route; and only the builder knows which methods it was given, so it keeps the list for `Allow`.
pub fn resource(path: &str) -> ServedResource {
    let segment = TrailingSegment::of(path);
    // A trailing segment's resource sits in a scope of the prefix and matches what is left of the path:
    // nothing, once the segment is taken.
    let matched = if segment.is_some() { "" } else { path };
    ServedResource {
        resource: web::resource(matched).app_data(RoutePattern::new(path)),
        segment,
        methods: Vec::new(),
        otherwise: None,
    }
}

/// The pattern a resource was registered with, found in a routed request's data: the metrics label, read
/// without walking the resource map again (that walk was 4% of a request read). It keeps the metric series
/// of the answers it has given, so a request finds its series without hashing its labels. Each HTTP worker
/// builds its own resources, so the lock is never contended.
pub struct RoutePattern {
    pub pattern: String,
    series: std::sync::Mutex<Vec<(&'static str, u16, HttpSeries)>>,
}

impl RoutePattern {
    fn new(path: &str) -> RoutePattern {
        RoutePattern {
            pattern: path.to_owned(),
            series: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// Counts and times an answer of `method` with `status` on this route.
    pub fn observe(&self, metrics: &Metrics, method: &'static str, status: u16, elapsed: Duration) {
        let mut series = self.series.lock().expect("route series");
        let place = match series
            .iter()
            .position(|(m, s, _)| *s == status && *m == method)
        {
            Some(place) => place,
            None => {
                series.push((
                    method,
                    status,
                    metrics.http_series(method, &self.pattern, status),
                ));
                series.len() - 1
            }
        };
        series[place].2.observe(elapsed);
    }
}

/// The label of `req`'s route, for metrics and logs: the pattern its resource was built with, else (a
/// resource not built by [`resource`]) the resource map's match, else the label of unmatched paths. Not
/// the resource map first: a trailing-segment route is a scope to actix, which would name its prefix.
pub fn route_label(req: &HttpRequest) -> Cow<'_, str> {
    match req.app_data::<RoutePattern>() {
        Some(pattern) => Cow::Borrowed(&pattern.pattern),
        None => Cow::Owned(
            req.match_pattern()
                .unwrap_or_else(|| UNMATCHED_ROUTE.to_owned()),
        ),
    }
}

/// A [`Resource`] being built, with the methods registered on it so far.
pub struct ServedResource {
    resource: Resource,
    segment: Option<TrailingSegment>,
    methods: Vec<Method>,
    /// What answers the methods not served, instead of 405: a standby forwards them.
    otherwise: Option<fn() -> Route>,
}

macro_rules! method {
    ($name:ident, $method:ident) => {
        #[doc = concat!("Serves ", stringify!($method), " with `handler`.")]
        pub fn $name<F, Args>(mut self, handler: F) -> ServedResource
        where
            F: Handler<Args>,
            Args: FromRequest + 'static,
            F::Output: Responder + 'static,
        {
            self.methods.push(Method::$method);
            self.resource = self.resource.$name(handler);
            self
        }
    };
}

impl ServedResource {
    /// Serves GET with `handler`, and HEAD with the same handler: RFC 9110 (section 9.1) asks every
    /// general-purpose server to support HEAD wherever it supports GET. actix-web sends HEAD answers
    /// without their body.
    pub fn get<F, Args>(mut self, handler: F) -> ServedResource
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        self.methods.extend([Method::GET, Method::HEAD]);
        self.resource = self.resource.get(handler.clone()).head(handler);
        self
    }

    /// Serves `method` with the routes `make` builds (a route without a method guard; the guard is added
    /// here). A GET also serves HEAD, as [`ServedResource::get`] does, which is why it takes a maker: each
    /// method needs a route of its own.
    pub fn route(mut self, method: Method, make: impl Fn() -> Route) -> ServedResource {
        self.resource = self.resource.route(make().method(method.clone()));
        if method == Method::GET {
            self.resource = self.resource.route(make().method(Method::HEAD));
            self.methods.extend([Method::GET, Method::HEAD]);
        } else {
            self.methods.push(method);
        }
        self
    }

    method!(post, POST);

    /// Answers the methods not served with the route `make` builds rather than 405: on a standby, the
    /// writes to a path whose reads it serves go to the node that runs requests.
    pub fn otherwise(mut self, make: Option<fn() -> Route>) -> ServedResource {
        self.otherwise = make;
        self
    }
}

impl HttpServiceFactory for ServedResource {
    fn register(self, config: &mut AppService) {
        let allow = self
            .methods
            .iter()
            .map(Method::as_str)
            .collect::<Vec<_>>()
            .join(", ");
        let resource = match self.otherwise {
            Some(make) => self.resource.default_service(make()),
            None => self
                .resource
                .default_service(web::to(move |req: HttpRequest| {
                    let allow = allow.clone();
                    async move { method_not_allowed(&req, &allow) }
                })),
        };
        match self.segment {
            Some(segment) => segment.register(resource, config),
            None => resource.register(config),
        }
    }
}

fn method_not_allowed(req: &HttpRequest, allow: &str) -> HttpResponse {
    let mut response = actix_web::ResponseError::error_response(&ApiError::new(
        Code::MethodNotAllowed,
        format!("Method {} is not allowed on {}", req.method(), req.path()),
    ));
    if let Ok(value) = header::HeaderValue::from_str(allow) {
        response.headers_mut().insert(header::ALLOW, value);
    }
    response
}

/// A path of static text ending in one parameter segment, such as `/v1/requests/{requestId}`. actix
/// matches every path with a parameter by regex (5% of a request read's CPU), so such a path is routed
/// as a scope of its static prefix instead, guarded by its number of segments, and the segment is taken
/// as the parameter by hand: what the handlers extract is the same.
struct TrailingSegment {
    prefix: String,
    name: String,
}

impl TrailingSegment {
    /// The prefix and parameter name of `path`, if it has that shape (a parameter with its own pattern,
    /// `{name:regex}`, does not).
    fn of(path: &str) -> Option<TrailingSegment> {
        let (prefix, last) = path.rsplit_once('/')?;
        let name = last.strip_prefix('{')?.strip_suffix('}')?;
        let plain = |c: char| c.is_ascii_alphanumeric() || c == '_';
        if prefix.is_empty()
            || prefix.contains(['{', '}'])
            || name.is_empty()
            || !name.chars().all(plain)
        {
            return None;
        }
        Some(TrailingSegment {
            prefix: prefix.to_owned(),
            name: name.to_owned(),
        })
    }

    fn register(self, resource: Resource, config: &mut AppService) {
        // The regex `[^/]+` would have matched exactly one more non-empty segment. Percent-decoding the
        // path never makes a slash, so the raw path's slashes count the same.
        let slashes = self.prefix.matches('/').count() + 1;
        let name = self.name;
        web::scope(&self.prefix)
            .guard(guard::fn_guard(move |ctx| {
                let path = ctx.head().uri.path();
                path.bytes().filter(|b| *b == b'/').count() == slashes && !path.ends_with('/')
            }))
            .wrap_fn(move |mut req, service| {
                let path = req.match_info_mut();
                let rest = path.unprocessed();
                let taken = rest.len() as u16;
                let segment = rest.strip_prefix('/').unwrap_or(rest).to_owned();
                path.add_static(name.clone(), segment);
                path.skip(taken);
                service.call(req)
            })
            .service(resource)
            .register(config)
    }
}
