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
use hmac::digest::KeyInit;
use hmac::{Hmac, Mac};
use prost::Message;
use sha2::Sha256;

use crate::error::Error;

/// Longest session token accepted, in bytes (a real one is well under: the claims hold at most
/// a 64-byte credential name and a 128-byte worker name).
pub const MAX_TOKEN_BYTES: usize = 512;

/// Bytes of the MAC a token carries.
const MAC_BYTES: usize = 16;

/// HMAC-SHA256 (RFC 2104), the MAC of session tokens.
type HmacSha256 = Hmac<Sha256>;

/// The HMAC-SHA256 of a session key, ready to take a message. RFC 2104 extends a key shorter
/// than the hash's 64-byte block with zeros; doing so here gives the key the length the type
/// asks for, so keying cannot fail (and the MAC is the one of the 32-byte key itself).
fn keyed(key: &[u8; 32]) -> HmacSha256 {
    let mut block = [0u8; 64];
    block[..key.len()].copy_from_slice(key);
    <HmacSha256 as KeyInit>::new(&block.into())
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
    /// The protocol revision it registered with (`RegisterRequest.protocol`; 0 in tokens
    /// issued before the field, read as a worker of no revision).
    #[prost(uint32, tag = "5")]
    protocol: u32,
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
    /// The protocol revision it speaks: a job whose question needs a later one
    /// (`Question::needs_protocol`) is never leased to it.
    pub protocol: u32,
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

    /// A new session of `name` with `threads`, speaking protocol revision `protocol`,
    /// registered by `credential` (`named`: whether the credential's name names its workers,
    /// see [`crate::credentials::Credential::names_workers`]): the session and its token.
    pub fn issue(
        &self,
        credential: &str,
        named: bool,
        name: &str,
        threads: u32,
        protocol: u32,
    ) -> (Session, String) {
        let claims = Claims {
            n: rand::random(),
            credential: credential.to_string(),
            name: name.to_string(),
            threads,
            protocol,
        };
        let token = self.sign(&claims);
        (session_of(claims, named), token)
    }

    /// The token of `claims`: `CLAIMS.MAC`, both base64url without padding, the MAC the first
    /// [`MAC_BYTES`] bytes of the claims' HMAC-SHA256 under this key. The format is what stored
    /// sessions hold: a token made before a restart (or by an older build) keeps verifying.
    fn sign(&self, claims: &Claims) -> String {
        let bytes = claims.encode_to_vec();
        let mac = keyed(&self.0).chain_update(&bytes).finalize().into_bytes();
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        format!("{}.{}", b64.encode(&bytes), b64.encode(&mac[..MAC_BYTES]))
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
        // a MAC of exactly MAC_BYTES, compared in constant time (the check of a cut MAC
        // compares only the bytes it has, so its length is checked first)
        if mac.len() != MAC_BYTES
            || keyed(&self.0)
                .chain_update(&bytes)
                .verify_truncated_left(&mac)
                .is_err()
        {
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
        protocol: claims.protocol,
        identity,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key and a token made by the code before the `hmac` crate (its own HMAC-SHA256,
    /// checked against RFC 4231): tokens in stores of that code must keep verifying.
    fn old_key() -> SessionKey {
        SessionKey::from_bytes(std::array::from_fn(|i| i as u8 * 7 + 1))
    }
    const OLD_TOKEN: &str = "CO-br834rNGRARIEZmFybRoGaG9zdC0xIAQ.CPLu0g_HN6ulCMc1scfcqA";

    #[test]
    fn hmac_matches_rfc_4231() {
        // test cases 1 and 2 of RFC 4231 (keys shorter than the block, as ours)
        let hex = |key: &[u8], msg: &[u8]| -> String {
            // zeros after a shorter key leave its MAC as it is (RFC 2104 pads with zeros)
            let mut padded = [0u8; 32];
            padded[..key.len()].copy_from_slice(key);
            keyed(&padded)
                .chain_update(msg)
                .finalize()
                .into_bytes()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect()
        };
        assert_eq!(
            hex(&[0x0b; 20], b"Hi There"),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
        assert_eq!(
            hex(b"Jefe", b"what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn a_token_of_the_code_before_still_verifies() {
        let claims = Claims {
            n: 0x0123_4567_89ab_cdef,
            credential: "farm".into(),
            name: "host-1".into(),
            threads: 4,
            protocol: 0,
        };
        assert_eq!(old_key().sign(&claims), OLD_TOKEN);
        let session = old_key().check(OLD_TOKEN, "farm", true).expect("verifies");
        assert_eq!(
            session,
            Session {
                id: "w456789abcdef".into(),
                credential: "farm".into(),
                name: "host-1".into(),
                threads: 4,
                protocol: 0,
                identity: "farm".into(),
            }
        );
        // one MAC byte changed, or the MAC cut to its first 15 or 1 bytes: refused
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let (claims_b64, mac_b64) = OLD_TOKEN.split_once('.').expect("a dot");
        let mac = b64.decode(mac_b64).expect("base64");
        let mut changed = mac.clone();
        changed[0] ^= 1;
        for bad in [&changed[..], &mac[..15], &mac[..1], &[]] {
            let bad = b64.encode(bad);
            let token = format!("{claims_b64}.{bad}");
            assert!(old_key().check(&token, "farm", true).is_err(), "{token}");
        }
    }

    #[test]
    fn a_token_names_its_session_only_for_its_credential_and_key() {
        let key = SessionKey::random();
        let (session, token) = key.issue("farm", true, "host-1", 4, cubefleet_proto::PROTOCOL);
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
