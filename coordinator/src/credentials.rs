//! Credentials and roles: who may call what.
//!
//! A credential is a bearer secret with a name and a role. A *client* credential may call the
//! `Batches` service (submit, status, results, cancel, lookup, revoke) and read the status
//! page; a *worker* credential may call the `Workers` service (register, lease, heartbeat,
//! complete, release) and nothing else. `--token` gives one credential of both roles (the
//! meaning it always had). A credential given as `NAME:SECRET` has its own name: the name
//! results show as their `worker` for every worker that uses it, and the name `cubefleet
//! revoke` refuses it by. Unnamed credentials get a name of the form `client-token-N` /
//! `worker-token-N` / `token` for logs, and their workers are named by their `--name`.
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
    /// Submit, watch, read results, cancel, look up, revoke; the status page.
    Client,
    /// Register, lease, heartbeat, complete, release.
    Worker,
    /// Both (the credential of `--token`, and a coordinator without authentication).
    Both,
}

impl Role {
    /// Whether a credential of this role may act as `needed` (Client or Worker).
    pub fn allows(self, needed: Role) -> bool {
        self == Role::Both || self == needed
    }

    /// Reads a role as a tokens file writes it: `client`, `worker` or `both`.
    fn parse(text: &str) -> Option<Role> {
        match text {
            "client" => Some(Role::Client),
            "worker" => Some(Role::Worker),
            "both" => Some(Role::Both),
            _ => None,
        }
    }
}

/// Longest credential name, in bytes.
pub const MAX_CREDENTIAL_NAME: usize = 64;

/// One credential.
#[derive(Clone, Debug)]
pub struct Credential {
    /// Its name (unique among the coordinator's credentials; 1 to [`MAX_CREDENTIAL_NAME`]
    /// bytes of letters, digits, `-`, `_` and `.`).
    pub name: Arc<str>,
    /// Whether the name was given (`NAME:SECRET`, a tokens file): then it names the workers
    /// that use it. A made-up name does not (its workers go by their `--name`).
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

    /// The credential of a coordinator without authentication: both roles, unnamed.
    pub fn anonymous() -> Credential {
        Credential {
            name: "anonymous".into(),
            named: false,
            role: Role::Both,
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

    /// Whether a credential named `name` exists.
    pub fn has_name(&self, name: &str) -> bool {
        self.list.iter().any(|c| &*c.name == name)
    }
}

/// The credentials of the role flags: each `--client-token` and `--worker-token`
/// (`NAME:SECRET`, or a bare secret named `client-token-N` / `worker-token-N`), and the lines
/// of a tokens file (`tokens_file`: its text; see [`parse_tokens_file`]). (`--token` is
/// `crate::Config::token`.)
pub fn from_flags(
    client: &[String],
    worker: &[String],
    tokens_file: Option<&str>,
) -> Result<Vec<Credential>, Error> {
    let mut list = Vec::new();
    for (flags, role, prefix) in [
        (client, Role::Client, "client-token"),
        (worker, Role::Worker, "worker-token"),
    ] {
        for (i, given) in flags.iter().enumerate() {
            list.push(match given.split_once(':') {
                Some((name, secret)) => Credential::new(name, true, role, secret)?,
                None => Credential::new(&format!("{prefix}-{}", i + 1), false, role, given)?,
            });
        }
    }
    if let Some(text) = tokens_file {
        list.extend(parse_tokens_file(text)?);
    }
    Ok(list)
}

/// The credentials of a tokens file: one per line, `NAME ROLE SECRET` separated by white
/// space, ROLE `client`, `worker` or `both`; blank lines and lines starting with `#` are
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
            .ok_or_else(|| bad(format!("role `{role}`: give client, worker or both")))?;
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
            Some(("token".into(), Role::Both, false))
        );
        assert_eq!(role("a-secret"), Some(("alice".into(), Role::Client, true)));
        assert_eq!(
            role("bare-client"),
            Some(("client-token-2".into(), Role::Client, false))
        );
        assert_eq!(role("w-secret"), Some(("farm".into(), Role::Worker, true)));
        assert_eq!(
            role("v-secret"),
            Some(("volunteer".into(), Role::Worker, true))
        );
        assert_eq!(role("o-secret"), Some(("ops".into(), Role::Both, true)));
        assert_eq!(role("a-secre"), None);
        assert_eq!(role(""), None);
        assert!(Role::Both.allows(Role::Worker) && !Role::Client.allows(Role::Worker));
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
