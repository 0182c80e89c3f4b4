//! Credentials and roles: who may call what.
//!
//! A credential is a bearer secret with a name and a role. A *client* credential may call the
//! `Batches` service (submit, status, results, cancel its own batches, lookup) and read the
//! status page; a *worker* credential may call the `Workers` service (register, lease,
//! heartbeat, complete, release) and nothing else; an *admin* credential may do what a client
//! does, cancel any batch, and `revoke` workers and credentials. `both` (tokens file) is a
//! client and a worker, never an admin; `--token`, the operator's one secret, is every role
//! (the meaning it always had), as is the caller of a coordinator without credentials.
//!
//! A credential's name is what results show as their `worker` for every worker that uses
//! it, what logs and the registry show, and what `cubefleet revoke` refuses it by: a worker's
//! own `--name` is a label, never its identity. A credential given as `NAME:SECRET` has that
//! name; a bare secret gets a stable name derived from the secret (`worker-token-` and 8 hex
//! digits of SHA-256 over a domain tag and the secret), so it stays the same across restarts
//! and flag orders and is logged at start for the operator.
//!
//! Invariants: no secret is empty (refused when the credentials are made, so an unset
//! variable never turns authentication off); no two credentials share a secret or a name; a
//! secret is compared in constant time against every credential, so the time a refusal takes
//! says nothing of which credential a guess was near.

use std::sync::Arc;

use crate::auth::token_matches;
use crate::error::Error;

/// What a credential may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Submit, watch, read results, cancel its own batches, look up; the status page.
    Client,
    /// Register, lease, heartbeat, complete, release.
    Worker,
    /// Client and worker (a tokens file's `both`); not an admin.
    Both,
    /// What a client may, cancel any batch, and revoke workers and credentials.
    Admin,
    /// Every role: `--token` (the operator's secret), and every caller of a coordinator
    /// without credentials.
    All,
}

impl Role {
    /// Whether a credential of this role may act as `needed` (Client, Worker or Admin).
    pub fn allows(self, needed: Role) -> bool {
        match (self, needed) {
            (Role::All, _) => true,
            (Role::Both, Role::Client | Role::Worker) => true,
            (Role::Admin, Role::Client) => true,
            (have, needed) => have == needed,
        }
    }

    /// Reads a role as a tokens file writes it: `client`, `worker`, `both` or `admin`.
    fn parse(text: &str) -> Option<Role> {
        match text {
            "client" => Some(Role::Client),
            "worker" => Some(Role::Worker),
            "both" => Some(Role::Both),
            "admin" => Some(Role::Admin),
            _ => None,
        }
    }
}

/// The stable name of an unnamed credential of secret `secret`: `prefix`, `-` and 8 hex
/// digits of SHA-256 over a domain tag and the secret (32 bits: enough to tell a fleet's
/// credentials apart, too few to help a guess of a secret).
pub fn derived_name(prefix: &str, secret: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::new()
        .chain_update(b"cubefleet credential name\0")
        .chain_update(secret.as_bytes())
        .finalize();
    let hex: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    format!("{prefix}-{hex}")
}

/// Longest credential name, in bytes.
pub const MAX_CREDENTIAL_NAME: usize = 64;

/// One credential.
#[derive(Clone, Debug)]
pub struct Credential {
    /// Its name (unique among the coordinator's credentials; 1 to [`MAX_CREDENTIAL_NAME`]
    /// bytes of letters, digits, `-`, `_` and `.`).
    pub name: Arc<str>,
    /// Whether the name was given (`NAME:SECRET`, a tokens file); else it was derived from
    /// the secret ([`derived_name`]). Either way it names the workers that use it.
    pub named: bool,
    /// What it may do.
    pub role: Role,
    /// The bearer secret (never empty).
    secret: Arc<[u8]>,
}

impl Credential {
    /// A credential; refuses an empty secret and a bad name.
    pub fn new(name: &str, named: bool, role: Role, secret: &str) -> Result<Credential, Error> {
        if secret.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "the credential {name} has an empty secret (an unset variable?): give a \
                 secret, or leave every token flag out to run without authentication"
            )));
        }
        if name.is_empty()
            || name.len() > MAX_CREDENTIAL_NAME
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
        {
            return Err(Error::InvalidArgument(format!(
                "credential name {name:?}: give 1 to {MAX_CREDENTIAL_NAME} letters, digits, \
                 `-`, `_` or `.`"
            )));
        }
        Ok(Credential {
            name: name.into(),
            named,
            role,
            secret: secret.as_bytes().into(),
        })
    }

    /// Whether this credential's name is the identity of the workers that use it: true for
    /// every credential with a secret; false only for [`Credential::anonymous`], where
    /// everyone who reaches the port is trusted alike and workers go by their `--name`.
    pub fn names_workers(&self) -> bool {
        !self.secret.is_empty()
    }

    /// The credential of a coordinator without authentication: every role, unnamed.
    pub fn anonymous() -> Credential {
        Credential {
            name: "anonymous".into(),
            named: false,
            role: Role::All,
            secret: Arc::from(&b""[..]),
        }
    }
}

/// The credentials a coordinator accepts; none: no authentication.
#[derive(Clone, Debug, Default)]
pub struct Credentials {
    list: Vec<Arc<Credential>>,
}

impl Credentials {
    /// The credentials `list`; refuses two with one secret or one name.
    pub fn new(list: Vec<Credential>) -> Result<Credentials, Error> {
        for (i, a) in list.iter().enumerate() {
            for b in &list[..i] {
                if a.name == b.name {
                    return Err(Error::InvalidArgument(format!(
                        "two credentials are named {}",
                        a.name
                    )));
                }
                if token_matches(&a.secret, &b.secret) {
                    return Err(Error::InvalidArgument(format!(
                        "credentials {} and {} have the same secret; give each its own",
                        b.name, a.name
                    )));
                }
            }
        }
        Ok(Credentials {
            list: list.into_iter().map(Arc::new).collect(),
        })
    }

    /// True when no credential is configured: every caller is [`Credential::anonymous`].
    pub fn is_open(&self) -> bool {
        self.list.is_empty()
    }

    /// The credential whose secret is `given`. Every credential is compared (in constant
    /// time each), whichever matches.
    pub fn find(&self, given: &[u8]) -> Option<Arc<Credential>> {
        let mut found = None;
        for c in &self.list {
            if token_matches(given, &c.secret) {
                found = Some(c.clone());
            }
        }
        found
    }

    /// The credentials whose names were derived from their secrets (not given).
    pub fn unnamed(&self) -> impl Iterator<Item = &Credential> {
        self.list.iter().filter(|c| !c.named).map(|c| &**c)
    }

    /// Whether a credential named `name` exists.
    pub fn has_name(&self, name: &str) -> bool {
        self.list.iter().any(|c| &*c.name == name)
    }
}

/// The credentials of the role flags: each `--client-token`, `--worker-token` and
/// `--admin-token` (`NAME:SECRET`, or a bare secret named by [`derived_name`]), and the lines
/// of a tokens file (`tokens_file`: its text; see [`parse_tokens_file`]). (`--token` is
/// `crate::Config::token`.)
pub fn from_flags(
    client: &[String],
    worker: &[String],
    tokens_file: Option<&str>,
) -> Result<Vec<Credential>, Error> {
    with_admins(client, worker, &[], tokens_file)
}

/// [`from_flags`] with `--admin-token` credentials `admin` too.
pub fn with_admins(
    client: &[String],
    worker: &[String],
    admin: &[String],
    tokens_file: Option<&str>,
) -> Result<Vec<Credential>, Error> {
    let mut list = Vec::new();
    for (flags, role, prefix) in [
        (client, Role::Client, "client-token"),
        (worker, Role::Worker, "worker-token"),
        (admin, Role::Admin, "admin-token"),
    ] {
        for given in flags {
            list.push(match given.split_once(':') {
                Some((name, secret)) => Credential::new(name, true, role, secret)?,
                None => Credential::new(&derived_name(prefix, given), false, role, given)?,
            });
        }
    }
    if let Some(text) = tokens_file {
        list.extend(parse_tokens_file(text)?);
    }
    Ok(list)
}

/// The credentials of a tokens file: one per line, `NAME ROLE SECRET` separated by white
/// space, ROLE `client`, `worker`, `both` or `admin`; blank lines and lines starting with `#` are
/// skipped. A bad line is an error naming its number.
pub fn parse_tokens_file(text: &str) -> Result<Vec<Credential>, Error> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let bad =
            |why: String| Error::InvalidArgument(format!("tokens file, line {}: {why}", n + 1));
        let [name, role, secret] = fields[..] else {
            return Err(bad(format!(
                "give `NAME ROLE SECRET`, {} fields found",
                fields.len()
            )));
        };
        let role = Role::parse(role)
            .ok_or_else(|| bad(format!("role `{role}`: give client, worker, both or admin")))?;
        out.push(Credential::new(name, true, role, secret).map_err(|e| bad(e.to_string()))?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The credentials of `--token` and the role flags, as the coordinator makes them.
    fn all(
        token: Option<&str>,
        client: &[String],
        worker: &[String],
        file: Option<&str>,
    ) -> Result<Credentials, Error> {
        let mut config = crate::Config::new("unused");
        config.token = token.map(str::to_string);
        config.credentials = from_flags(client, worker, file)?;
        config.credentials()
    }

    #[test]
    fn an_empty_secret_is_refused_with_what_to_do() {
        let e = all(Some(""), &[], &[], None).expect_err("empty token");
        assert!(e.to_string().contains("without authentication"), "{e}");
        assert!(all(None, &["alice:".into()], &[], None).is_err());
        assert!(all(None, &[], &[String::new()], None).is_err());
        assert!(all(None, &[], &[], None).expect("none").is_open());
    }

    #[test]
    fn roles_names_and_secrets() {
        let c = all(
            Some("both-secret"),
            &["alice:a-secret".into(), "bare-client".into()],
            &["farm:w-secret".into()],
            Some("# comment\n\nvolunteer worker v-secret\nops both o-secret\n"),
        )
        .expect("valid");
        let role = |s: &str| {
            c.find(s.as_bytes())
                .map(|c| (c.name.to_string(), c.role, c.named))
        };
        assert_eq!(
            role("both-secret"),
            Some(("token".into(), Role::All, false))
        );
        assert_eq!(role("a-secret"), Some(("alice".into(), Role::Client, true)));
        // a bare secret's name is derived from it: the same in every start and flag order
        let bare = derived_name("client-token", "bare-client");
        assert!(
            bare.starts_with("client-token-") && bare.len() == 21,
            "{bare}"
        );
        assert_eq!(role("bare-client"), Some((bare, Role::Client, false)));
        assert_eq!(role("w-secret"), Some(("farm".into(), Role::Worker, true)));
        assert_eq!(
            role("v-secret"),
            Some(("volunteer".into(), Role::Worker, true))
        );
        assert_eq!(role("o-secret"), Some(("ops".into(), Role::Both, true)));
        assert_eq!(role("a-secre"), None);
        assert_eq!(role(""), None);
        assert!(Role::Both.allows(Role::Worker) && !Role::Client.allows(Role::Worker));
        // revoking is the admin's (and the operator's `--token`), never a client's or worker's
        assert!(Role::Admin.allows(Role::Admin) && Role::Admin.allows(Role::Client));
        assert!(Role::All.allows(Role::Admin) && !Role::Admin.allows(Role::Worker));
        for r in [Role::Client, Role::Worker, Role::Both] {
            assert!(!r.allows(Role::Admin), "{r:?}");
        }
        // one secret twice, one name twice, bad lines
        assert!(all(None, &["x".into()], &["x".into()], None).is_err());
        assert!(all(None, &["a:1".into()], &["a:2".into()], None).is_err());
        for bad in [
            "alice client",
            "alice boss s",
            "al ice worker s s",
            "a/b worker s",
        ] {
            let e = parse_tokens_file(&format!("\n{bad}\n")).expect_err(bad);
            assert!(e.to_string().contains("line 2"), "{e}");
        }
    }
}
