//! A team database's URL made into a connection configuration: libpq's
//! `sslmode` values (`disable` to `verify-full`) and `sslrootcert` mapped
//! onto rustls, and a name for the database that never holds its password.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::store::StoreError;

/// Where and how to connect.
pub struct Target {
    pub config: postgres::Config,
    pub tls: MakeRustlsConnect,
    /// `user@host:port/database`, for messages and logs.
    pub name: String,
}

/// How the server's certificate is checked, as libpq's `sslmode` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    /// Encrypted when the server offers it (or must, for `require`), not verified.
    None,
    /// The chain must lead to a trusted root; the name is not compared.
    Chain,
    /// The chain and the host name.
    Full,
}

/// Parses a `postgres://` URL (or a `key=value` connection string).
pub fn parse(url: &str) -> Result<Target, StoreError> {
    let (rest, options) = take_tls_options(url);
    let check = match options.mode.as_deref() {
        Some("verify-full") => Check::Full,
        Some("verify-ca") => Check::Chain,
        _ => Check::None,
    };
    let mut config = postgres::Config::from_str(&rest).map_err(|error| {
        StoreError::Url(format!(
            "not a PostgreSQL URL ({error}); expected postgres://user:password@host:port/database"
        ))
    })?;
    if config.get_hosts().is_empty() {
        return Err(StoreError::Url(
            "names no host; expected postgres://user:password@host:port/database".into(),
        ));
    }
    if check != Check::None {
        config.ssl_mode(postgres::config::SslMode::Require);
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(std::time::Duration::from_secs(5));
    }
    config.keepalives(true);
    config.application_name("cos-hub");
    let name = name_of(&config);
    let tls = MakeRustlsConnect::new(client_config(check, options.root_cert.as_deref())?);
    Ok(Target { config, tls, name })
}

/// `user@host:port/database` of `config`.
pub fn name_of(config: &postgres::Config) -> String {
    let host = match config.get_hosts().first() {
        Some(postgres::config::Host::Tcp(host)) => host.clone(),
        Some(postgres::config::Host::Unix(path)) => path.display().to_string(),
        None => "localhost".into(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config.get_user().unwrap_or("postgres");
    let database = config.get_dbname().unwrap_or(user);
    format!("{user}@{host}:{port}/{database}")
}

#[derive(Default)]
struct TlsOptions {
    mode: Option<String>,
    root_cert: Option<PathBuf>,
}

/// The URL without the options rustls handles here (`sslmode=verify-*`,
/// which the driver does not know, and `sslrootcert`), and those options.
fn take_tls_options(url: &str) -> (String, TlsOptions) {
    let mut options = TlsOptions::default();
    let mut take = |key: &str, value: &str| -> bool {
        match key {
            "sslmode" if value.starts_with("verify-") => options.mode = Some(value.to_string()),
            "sslrootcert" => options.root_cert = Some(PathBuf::from(value)),
            _ => return false,
        }
        true
    };
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let Some((base, query)) = url.split_once('?') else {
            return (url.to_string(), options);
        };
        let kept: Vec<&str> = query
            .split('&')
            .filter(|pair| {
                let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                let value = percent_encoding::percent_decode_str(value).decode_utf8_lossy();
                !take(key, &value)
            })
            .collect();
        let rest = if kept.is_empty() {
            base.to_string()
        } else {
            format!("{base}?{}", kept.join("&"))
        };
        return (rest, options);
    }
    let kept: Vec<&str> = url
        .split_whitespace()
        .filter(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            !take(key.trim(), value.trim_matches('\''))
        })
        .collect();
    (kept.join(" "), options)
}

/// ring's provider: it builds with the C compiler alone, where aws-lc-rs
/// (which offers the post-quantum key exchange ring lacks) needs CMake.
#[allow(deprecated)]
fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn client_config(
    check: Check,
    root_cert: Option<&Path>,
) -> Result<rustls::ClientConfig, StoreError> {
    let builder = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|error| StoreError::Url(format!("TLS: {error}")))?;
    if check == Check::None {
        return Ok(builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Unverified(provider())))
            .with_no_client_auth());
    }
    let roots = Arc::new(roots(root_cert)?);
    let verifier = rustls::client::WebPkiServerVerifier::builder_with_provider(roots, provider())
        .build()
        .map_err(|error| StoreError::Url(format!("TLS roots: {error}")))?;
    Ok(builder
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(Verified {
            inner: verifier,
            names: check == Check::Full,
        }))
        .with_no_client_auth())
}

/// The system's roots, `~/.postgresql/root.crt` as libpq reads it, and
/// `sslrootcert` when given.
fn roots(root_cert: Option<&Path>) -> Result<RootCertStore, StoreError> {
    let mut store = RootCertStore::empty();
    for certificate in rustls_native_certs::load_native_certs().certs {
        let _ = store.add(certificate);
    }
    let default =
        std::env::var_os("HOME").map(|home| Path::new(&home).join(".postgresql/root.crt"));
    let file = root_cert
        .map(Path::to_path_buf)
        .or(default.filter(|path| path.exists()));
    if let Some(file) = file {
        for certificate in roots_from(&file)? {
            store.add(certificate).map_err(|error| {
                StoreError::Url(format!("sslrootcert {}: {error}", file.display()))
            })?;
        }
    }
    if store.is_empty() {
        return Err(StoreError::Url(
            "sslmode=verify-ca/verify-full needs a trusted root: sslrootcert=FILE or the system's certificates".into(),
        ));
    }
    Ok(store)
}

/// The PEM certificates of `file`.
fn roots_from(file: &Path) -> Result<Vec<CertificateDer<'static>>, StoreError> {
    let fail = |error: &dyn std::fmt::Display| {
        StoreError::Url(format!("sslrootcert {}: {error}", file.display()))
    };
    let pem = std::fs::read(file).map_err(|error| fail(&error))?;
    CertificateDer::pem_slice_iter(&pem)
        .map(|certificate| certificate.map_err(|error| fail(&error)))
        .collect()
}

/// libpq's `require`: the connection is encrypted, the certificate not checked.
#[derive(Debug)]
struct Unverified(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for Unverified {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        certificate: &CertificateDer<'_>,
        signature: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            certificate,
            signature,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        certificate: &CertificateDer<'_>,
        signature: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            certificate,
            signature,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca` and `verify-full`: the chain checked, the name only for `verify-full`.
#[derive(Debug)]
struct Verified {
    inner: Arc<rustls::client::WebPkiServerVerifier>,
    names: bool,
}

impl ServerCertVerifier for Verified {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.inner.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.names => Ok(ServerCertVerified::assertion()),
            verified => verified,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        certificate: &CertificateDer<'_>,
        signature: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner
            .verify_tls12_signature(message, certificate, signature)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        certificate: &CertificateDer<'_>,
        signature: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner
            .verify_tls13_signature(message, certificate, signature)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_leaves_out_the_password() {
        let target = parse("postgres://alice:s3cret@db.example:6543/team?sslmode=require").unwrap();
        assert_eq!(target.name, "alice@db.example:6543/team");
        assert!(!target.name.contains("s3cret"));
    }

    #[test]
    fn verify_modes_and_root_certificates_are_taken_out_of_the_url() {
        let (rest, options) = take_tls_options(
            "postgres://a@h/d?sslmode=verify-full&sslrootcert=%2Ftmp%2Fca.pem&connect_timeout=3",
        );
        assert_eq!(rest, "postgres://a@h/d?connect_timeout=3");
        assert_eq!(options.mode.as_deref(), Some("verify-full"));
        assert_eq!(options.root_cert, Some(PathBuf::from("/tmp/ca.pem")));
        let (rest, options) = take_tls_options("host=h user=a sslmode=require");
        assert_eq!(rest, "host=h user=a sslmode=require");
        assert!(options.mode.is_none());
    }

    #[test]
    fn a_root_file_of_pem_certificates_is_read() {
        // Debian's bundle of roots (the ca-certificates package)
        let bundle = "/etc/ssl/certs/ca-certificates.crt";
        let roots = roots(Some(Path::new(bundle))).unwrap();
        assert!(roots.len() > 100, "{} roots", roots.len());
        let junk = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(
            junk.path(),
            "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        let refused = roots_from(junk.path())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(refused.contains("sslrootcert"), "{refused}");
    }

    #[test]
    fn a_missing_root_file_or_a_bad_url_is_an_error_naming_it() {
        let missing = parse("postgres://a@h/d?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem");
        let message = missing.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(message.contains("/nonexistent/ca.pem"), "{message}");
        let bad = parse("postgres://a@h:notaport/d")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(bad.contains("PostgreSQL URL"), "{bad}");
    }
}
