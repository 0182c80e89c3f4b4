//! Bearer tokens: one comparison for gRPC calls and HTTP requests, in constant time
//! (`subtle`), so the time a refusal takes says nothing about how much of a guess was right.

use base64::Engine as _;
use subtle::ConstantTimeEq;

/// Whether `given` is the token `expected` (compared in constant time for tokens of equal
/// length; a length mismatch is refused at once, which reveals only the length).
pub(crate) fn token_matches(given: &[u8], expected: &[u8]) -> bool {
    bool::from(given.ct_eq(expected))
}

/// The token an HTTP `Authorization` header presents: `Bearer TOKEN`, or `Basic` credentials
/// whose password is the token (any user name), which is what a browser sends after its login
/// prompt. `None` for anything else.
pub(crate) fn http_token(authorization: &str) -> Option<Vec<u8>> {
    let (scheme, value) = authorization.trim().split_once(' ')?;
    if scheme.eq_ignore_ascii_case("bearer") {
        Some(value.trim().as_bytes().to_vec())
    } else if scheme.eq_ignore_ascii_case("basic") {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(value.trim())
            .ok()?;
        let colon = decoded.iter().position(|&b| b == b':')?;
        Some(decoded[colon + 1..].to_vec())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_whole() {
        assert!(token_matches(b"s3cret", b"s3cret"));
        assert!(!token_matches(b"s3cre", b"s3cret"));
        assert!(!token_matches(b"s3cret!", b"s3cret"));
        assert!(!token_matches(b"", b"s3cret"));
        assert!(!token_matches(b"S3cret", b"s3cret"));
    }

    #[test]
    fn http_credentials_bearer_and_basic() {
        assert_eq!(http_token("Bearer abc").as_deref(), Some(&b"abc"[..]));
        // "anyone:abc"
        assert_eq!(
            http_token("Basic YW55b25lOmFiYw==").as_deref(),
            Some(&b"abc"[..])
        );
        assert_eq!(http_token("Basic !!!"), None);
        assert_eq!(http_token("Digest abc"), None);
        assert_eq!(http_token("abc"), None);
    }
}
