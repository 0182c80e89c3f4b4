//! `cubefleet certs`: a private CA and a server certificate signed by it, for a coordinator
//! served over TLS (`--tls-cert cert.pem --tls-key key.pem`) whose clients and workers trust
//! the CA (`CUBEFLEET_TLS_CA=ca.pem`). Run again with other names, it signs a new server
//! certificate with the CA already in the directory, so the clients' `ca.pem` stays valid.
//!
//! Files written in `--out` (keys readable by their owner only):
//!
//! | file | what | who needs it |
//! | --- | --- | --- |
//! | `ca.pem` | the CA's certificate | every client and worker (`CUBEFLEET_TLS_CA`) |
//! | `ca-key.pem` | the CA's private key | nobody but `cubefleet certs`: keep it private |
//! | `cert.pem` | the server certificate, for the names given | the coordinator (`--tls-cert`) |
//! | `key.pem` | its private key | the coordinator (`--tls-key`) |

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose,
};

/// The CA's name: fixed, so that a CA key found in the directory signs with the subject its
/// certificate was made with.
const CA_NAME: &str = "cubefleet CA";

/// How long the CA's certificate is valid: ten years.
const CA_DAYS: u32 = 3650;

/// `cubefleet certs --name HOST [--name HOST...] [--out DIR] [--days N]`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// A name the coordinator is reached by: a host name (`coordinator.example`,
    /// `localhost`) or an IP address. Give every name clients and workers use in their URL.
    #[arg(long = "name", value_name = "HOST", required = true)]
    names: Vec<String>,
    /// Directory of the files (made when missing); a CA already in it (`ca.pem`,
    /// `ca-key.pem`) signs the new certificate.
    #[arg(long, value_name = "DIR", default_value = ".")]
    out: PathBuf,
    /// Days the server certificate is valid (1 to 3650).
    #[arg(long, default_value_t = 825, value_parser = clap::value_parser!(u32).range(1..=3650))]
    days: u32,
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    std::fs::create_dir_all(&args.out).with_context(|| format!("--out {}", args.out.display()))?;
    let (ca_cert, ca_key) = (args.out.join("ca.pem"), args.out.join("ca-key.pem"));
    let made_ca = match (ca_cert.exists(), ca_key.exists()) {
        (true, true) => false,
        (false, false) => {
            let (cert, key) = new_ca()?;
            write_private(&ca_key, &key)?;
            write(&ca_cert, &cert)?;
            true
        }
        _ => anyhow::bail!(
            "{} holds one of ca.pem and ca-key.pem without the other: move it away, or give \
             another --out",
            args.out.display()
        ),
    };
    let key_pem = std::fs::read_to_string(&ca_key)
        .with_context(|| format!("reading {}", ca_key.display()))?;
    let issuer = ca_issuer(&key_pem).with_context(|| {
        format!(
            "{} is not a CA key `cubefleet certs` made",
            ca_key.display()
        )
    })?;
    let (cert, key) = server_certificate(&args.names, args.days, &issuer)?;
    write_private(&args.out.join("key.pem"), &key)?;
    write(&args.out.join("cert.pem"), &cert)?;
    let dir = args.out.display();
    if made_ca {
        println!("made a CA: {dir}/ca.pem (give it to clients and workers) and {dir}/ca-key.pem (keep it private)");
    } else {
        println!("signed with the CA in {dir}/ca.pem");
    }
    println!(
        "made {dir}/cert.pem and {dir}/key.pem for {}, valid {} days:",
        args.names.join(", "),
        args.days
    );
    let host = &args.names[0];
    println!("  cubefleet coordinator --tls-cert {dir}/cert.pem --tls-key {dir}/key.pem ...");
    println!("  CUBEFLEET_TLS_CA={dir}/ca.pem cubefleet status --coordinator https://{host}:7700");
    Ok(ExitCode::SUCCESS)
}

/// The CA's parameters: its subject ([`CA_NAME`]) and what its key may sign. The same every
/// time, so that [`ca_issuer`] signs as the CA certificate [`new_ca`] made.
fn ca_params() -> CertificateParams {
    let mut params = CertificateParams::default();
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, CA_NAME);
    params.distinguished_name = dn;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    params
}

/// A new CA: its certificate and private key, both PEM.
fn new_ca() -> anyhow::Result<(String, String)> {
    let key = KeyPair::generate()?;
    let mut params = ca_params();
    set_validity(&mut params, CA_DAYS)?;
    let cert = params.self_signed(&key)?;
    Ok((cert.pem(), key.serialize_pem()))
}

/// The CA whose private key is `key_pem` (one [`new_ca`] made), ready to sign.
fn ca_issuer(key_pem: &str) -> anyhow::Result<Issuer<'static, KeyPair>> {
    let key = KeyPair::from_pem(key_pem)?;
    Ok(Issuer::new(ca_params(), key))
}

/// A server certificate for `names` valid `days` days, signed by `issuer`: the certificate
/// and its private key, both PEM.
fn server_certificate(
    names: &[String],
    days: u32,
    issuer: &Issuer<'_, KeyPair>,
) -> anyhow::Result<(String, String)> {
    let mut params = CertificateParams::new(names.to_vec())
        .map_err(|e| anyhow::anyhow!("--name {}: {e}", names.join(", ")))?;
    params
        .distinguished_name
        .push(DnType::CommonName, names[0].as_str());
    params.is_ca = IsCa::ExplicitNoCa;
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.use_authority_key_identifier_extension = true;
    set_validity(&mut params, days)?;
    let key = KeyPair::generate()?;
    let cert = params.signed_by(&key, issuer)?;
    Ok((cert.pem(), key.serialize_pem()))
}

/// Makes `params` valid from a day ago (clocks differ) to `days` days from now.
fn set_validity(params: &mut CertificateParams, days: u32) -> anyhow::Result<()> {
    let now = SystemTime::now().duration_since(UNIX_EPOCH)?;
    let day = Duration::from_secs(86_400);
    let date = |t: Duration| {
        let (y, m, d) = civil_date(t.as_secs() / 86_400);
        rcgen::date_time_ymd(y, m, d)
    };
    params.not_before = date(now.saturating_sub(day));
    params.not_after = date(now + day * days);
    Ok(())
}

/// The calendar date (year, month 1-12, day 1-31) of `days` days after 1970-01-01
/// (proleptic Gregorian; Howard Hinnant's `civil_from_days`).
fn civil_date(days: u64) -> (i32, u8, u8) {
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y as i32, m as u8, d as u8)
}

/// Writes `text` to `path`.
fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

/// Writes a private key to `path`, readable by its owner only (where permissions exist).
fn write_private(path: &Path, text: &str) -> anyhow::Result<()> {
    #[cfg(unix)]
    {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let _ = std::fs::remove_file(path);
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
            .with_context(|| format!("writing {}", path.display()))?;
        f.write_all(text.as_bytes())
            .with_context(|| format!("writing {}", path.display()))
    }
    #[cfg(not(unix))]
    {
        write(path, text)
    }
}

#[cfg(test)]
mod tests {
    use super::civil_date;

    #[test]
    fn civil_dates_of_known_days() {
        assert_eq!(civil_date(0), (1970, 1, 1));
        assert_eq!(civil_date(59), (1970, 3, 1));
        assert_eq!(civil_date(11_016), (2000, 2, 29));
        assert_eq!(civil_date(20_785), (2026, 11, 28));
    }
}
