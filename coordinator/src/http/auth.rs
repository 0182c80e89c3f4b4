//! The token of the status page and `/api/*`: `Authorization: Bearer TOKEN`, or HTTP Basic
//! credentials whose password is the token (any user name; a browser asks for them, since a
//! 401 carries `WWW-Authenticate: Basic`). Only a client credential (or one of both roles)
//! passes; `/metrics` and `/healthz` need none.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::credentials::{Credential, Credentials, Role};

/// The credentials of a `token` (of every role; none, or empty: no authentication).
pub(super) fn token_credentials(token: Option<String>) -> Arc<Credentials> {
    let list = token
        .filter(|t| !t.is_empty())
        .and_then(|t| Credential::new("token", false, Role::All, &t).ok());
    Arc::new(Credentials::new(list.into_iter().collect()).unwrap_or_default())
}

/// Lets a request through when it presents a client credential (or one of both roles) that
/// is not revoked; 401 (with a Basic challenge, so a browser asks) when not.
pub(super) async fn require_token(
    State((credentials, core)): State<(Arc<Credentials>, Arc<crate::core::Core>)>,
    req: Request,
    next: Next,
) -> Response {
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(crate::auth::http_token);
    let client = given
        .as_deref()
        .and_then(|g| credentials.find(g))
        .is_some_and(|c| c.role.allows(Role::Client) && !core.is_revoked(&c.name));
    match given {
        Some(_) if client => next.run(req).await,
        given => {
            let why = if given.is_some() {
                "wrong token\n"
            } else {
                "this coordinator needs its token (--token or CUBEFLEET_TOKEN): send \
                 `Authorization: Bearer TOKEN`, or log in with any user name and the token as \
                 password\n"
            };
            (
                StatusCode::UNAUTHORIZED,
                [(
                    header::WWW_AUTHENTICATE,
                    "Basic realm=\"cubefleet\", charset=\"UTF-8\"",
                )],
                why,
            )
                .into_response()
        }
    }
}
