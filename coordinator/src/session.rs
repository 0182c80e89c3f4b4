//! Worker sessions: the secret a registration hands a worker, which names it in every later
//! call.
//!
//! A session token is `CLAIMS.MAC`: the session's claims (a random number, the credential
//! that registered it, the worker's name and threads; prost-encoded, base64url) and the first
//! 16 bytes of HMAC-SHA256 over them under the store's session key (kept in the store, so
//! sessions outlive a restart of the coordinator without a table of them). Only the
//! coordinator can make a token; a token is accepted only from the credential that registered
//! it. What is shown (status page, metrics, results, logs) is the session's public id, never
//! the token.

use std::sync::Arc;

use base64::Engine as _;
use prost::Message;
use sha2::{Digest, Sha256};

use crate::auth::token_matches;
use crate::error::Error;

/// Longest session token accepted, in bytes (a real one is well under: the claims hold at most
/// a 64-byte credential name and a 128-byte worker name).
pub const MAX_TOKEN_BYTES: usize = 512;

/// Bytes of the MAC a token carries.
const MAC_BYTES: usize = 16;

/// HMAC-SHA256 (RFC 2104) of `msg` under `key` (at most 64 bytes, the block size).
fn hmac_sha256(key: &[u8], msg: &[u8]) -> [u8; 32] {
    debug_assert!(key.len() <= 64);
    let mut block = [0u8; 64];
    block[..key.len()].copy_from_slice(key);
    let pad = |byte: u8| block.map(|b| b ^ byte);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(msg)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

/// What a session token says of its session.
#[derive(Clone, PartialEq, prost::Message)]
struct Claims {
    /// A random number naming the session (its public id is made of it).
    #[prost(uint64, tag = "1")]
    n: u64,
    /// The name of the credential that registered it.
    #[prost(string, tag = "2")]
    credential: String,
    /// The worker's name (its `--name`, or host and process id).
    #[prost(string, tag = "3")]
    name: String,
    /// Its search threads (1 to 1024).
    #[prost(uint32, tag = "4")]
    threads: u32,
}

/// A worker session as the coordinator knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Session {
    /// Its public id, `w` and 12 hex digits: what is shown and what leases are held by.
    pub id: Arc<str>,
    /// The credential that registered it.
    pub credential: Arc<str>,
    /// The worker's name.
    pub name: String,
    /// Its search threads.
    pub threads: u32,
    /// The name its answers carry and `revoke` takes: the credential's name (given or
    /// derived), never what the worker says of itself; the worker's name only on a
    /// coordinator without credentials ([`crate::credentials::Credential::names_workers`]).
    pub identity: String,
}

/// The key sessions are signed with (32 random bytes, kept in the store).
#[derive(Clone)]
pub struct SessionKey([u8; 32]);

impl std::fmt::Debug for SessionKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionKey(..)")
    }
}

impl SessionKey {
    /// The key of these bytes.
    pub fn from_bytes(bytes: [u8; 32]) -> SessionKey {
        SessionKey(bytes)
    }

    /// A new random key.
    pub fn random() -> SessionKey {
        SessionKey(rand::random())
    }

    /// Its bytes (to store).
    pub fn bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// A new session of `name` with `threads`, registered by `credential` (`named`: whether
    /// the credential's name names its workers, see
    /// [`crate::credentials::Credential::names_workers`]): the session and its token.
    pub fn issue(
        &self,
        credential: &str,
        named: bool,
        name: &str,
        threads: u32,
    ) -> (Session, String) {
        let claims = Claims {
            n: rand::random(),
            credential: credential.to_string(),
            name: name.to_string(),
            threads,
        };
        let bytes = claims.encode_to_vec();
        let mac = hmac_sha256(&self.0, &bytes);
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let token = format!("{}.{}", b64.encode(&bytes), b64.encode(&mac[..MAC_BYTES]));
        (session_of(claims, named), token)
    }

    /// The session `token` names, when this key made it for `credential`; else an error that
    /// says nothing of which part was wrong.
    pub fn check(&self, token: &str, credential: &str, named: bool) -> Result<Session, Error> {
        let refused = || {
            Error::Unauthenticated(
                "unknown worker session: register again (the worker does so by itself)".into(),
            )
        };
        if token.len() > MAX_TOKEN_BYTES {
            return Err(refused());
        }
        let (claims, mac) = token.split_once('.').ok_or_else(refused)?;
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let (bytes, mac) = match (b64.decode(claims), b64.decode(mac)) {
            (Ok(b), Ok(m)) => (b, m),
            _ => return Err(refused()),
        };
        let expected = hmac_sha256(&self.0, &bytes);
        if !token_matches(&mac, &expected[..MAC_BYTES]) {
            return Err(refused());
        }
        let claims = Claims::decode(&bytes[..]).map_err(|_| refused())?;
        if claims.credential != credential {
            return Err(Error::PermissionDenied(
                "this session belongs to another credential".into(),
            ));
        }
        Ok(session_of(claims, named))
    }
}

/// The session its claims describe.
fn session_of(claims: Claims, named: bool) -> Session {
    let identity = if named {
        claims.credential.clone()
    } else {
        claims.name.clone()
    };
    Session {
        id: format!("w{:012x}", claims.n & 0xffff_ffff_ffff).into(),
        credential: claims.credential.into(),
        name: claims.name,
        threads: claims.threads,
        identity,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231() {
        // test case 2 of RFC 4231
        let mac = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        let hex: String = mac.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn a_token_names_its_session_only_for_its_credential_and_key() {
        let key = SessionKey::random();
        let (session, token) = key.issue("farm", true, "host-1", 4);
        assert_eq!(key.check(&token, "farm", true).ok(), Some(session.clone()));
        assert_eq!(session.identity, "farm");
        assert_eq!(
            key.check(&token, "farm", false).ok().map(|s| s.identity),
            Some("host-1".into())
        );
        assert!(
            !token.contains(&*session.id),
            "the public id is not the secret"
        );
        assert!(matches!(
            key.check(&token, "other", true),
            Err(Error::PermissionDenied(_))
        ));
        assert!(SessionKey::random().check(&token, "farm", true).is_err());
        // any change of a byte, a cut, or nonsense
        let mut bytes = token.clone().into_bytes();
        for i in 0..bytes.len() {
            let b = bytes[i];
            bytes[i] = if b == b'A' { b'B' } else { b'A' };
            let changed = String::from_utf8(bytes.clone()).expect("ascii");
            if changed != token {
                assert!(key.check(&changed, "farm", true).is_err(), "{changed}");
            }
            bytes[i] = b;
        }
        for bad in [
            "",
            ".",
            "w1",
            &token[..token.len() - 1],
            &"x".repeat(10_000),
        ] {
            assert!(key.check(bad, "farm", true).is_err(), "{bad}");
        }
    }
}
