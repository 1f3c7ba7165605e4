//! TLS configurations (rustls with the ring provider): a server config from PEM files
//! or a self-signed certificate made at start, and client configs that verify against
//! the system roots, a given CA, or nothing (`--insecure`).

use super::tls_words as words;
use crate::error::{Error, Result};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, ServerConfig, SignatureScheme};
use sha2::{Digest, Sha256};
use std::path::Path;
use std::sync::Arc;

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A server's TLS setup and the SHA-256 fingerprint of its certificate.
pub struct ServerTls {
    pub config: Arc<ServerConfig>,
    pub fingerprint: String,
    /// The certificate in PEM when it was generated here, so clients can trust it.
    pub generated_pem: Option<String>,
}

pub fn fingerprint(der: &[u8]) -> String {
    Sha256::digest(der)
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

fn read_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>> {
    let certs: Vec<_> = CertificateDer::pem_file_iter(path)
        .map_err(|e| {
            Error::usage(format!(
                "cannot read certificate file {}: {}",
                path.display(),
                words::pem(&e)
            ))
        })?
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| {
            Error::usage(format!(
                "certificate file {} is not valid PEM: {}",
                path.display(),
                words::pem(&e)
            ))
        })?;
    if certs.is_empty() {
        return Err(Error::usage(format!(
            "certificate file {} holds no certificate",
            path.display()
        )));
    }
    Ok(certs)
}

fn build_server(
    certs: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    client_ca: Option<&Path>,
) -> Result<Arc<ServerConfig>> {
    let builder = ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::runtime(format!("TLS setup failed: {}", words::config_failure(&e))))?;
    let builder = match client_ca {
        None => builder.with_no_client_auth(),
        Some(ca) => builder.with_client_cert_verifier(client_verifier(ca)?),
    };
    let cfg = builder.with_single_cert(certs, key).map_err(|e| {
        Error::usage(format!(
            "the TLS certificate and key do not work together: {}",
            words::config_failure(&e)
        ))
    })?;
    Ok(Arc::new(cfg))
}

/// `serve --client-ca FILE`: every client must present a certificate signed by a CA
/// in FILE (mutual TLS); a client without one fails its handshake.
fn client_verifier(ca: &Path) -> Result<Arc<dyn rustls::server::danger::ClientCertVerifier>> {
    let mut roots = RootCertStore::empty();
    add_roots(&mut roots, read_certs(ca)?, &ca.display().to_string())?;
    rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider())
        .build()
        .map_err(|e| {
            let why = match e {
                rustls::server::VerifierBuilderError::NoRootAnchors => "it holds no CA certificate",
                _ => "rustls refused its certificates as client CAs",
            };
            Error::usage(format!("--client-ca {}: {why}", ca.display()))
        })
}

/// Adds every certificate of `certs` (read from `from`) as a trust anchor.
fn add_roots(
    roots: &mut RootCertStore,
    certs: Vec<CertificateDer<'static>>,
    from: &str,
) -> Result<()> {
    for c in certs {
        roots.add(c).map_err(|e| {
            Error::usage(format!(
                "{from} holds a certificate that cannot be trusted as a CA ({})",
                words::short(&e)
            ))
        })?;
    }
    Ok(())
}

/// A private key from a PEM file, or why not in one sentence.
fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>> {
    PrivateKeyDer::from_pem_file(path).map_err(|e| {
        Error::usage(format!(
            "cannot read a private key from {}: {}",
            path.display(),
            words::pem(&e)
        ))
    })
}

/// TLS from a certificate chain and private key in PEM files; with `client_ca`, every
/// client must present a certificate that CA signed.
pub fn server_from_files(cert: &Path, key: &Path, client_ca: Option<&Path>) -> Result<ServerTls> {
    let certs = read_certs(cert)?;
    let key = read_key(key)?;
    let fp = fingerprint(&certs[0]);
    Ok(ServerTls {
        config: build_server(certs, key, client_ca)?,
        fingerprint: fp,
        generated_pem: None,
    })
}

/// The names a generated certificate is for.
pub const SELF_SIGNED_NAMES: &str = "localhost, 127.0.0.1 and ::1";

/// A self-signed certificate for localhost, 127.0.0.1 and ::1, made now: a leaf
/// (no CA:TRUE), so a client given it as its CA (`--ca`, curl's `--cacert`,
/// `openssl s_client -CAfile`) trusts exactly this server.
pub fn generate_self_signed() -> Result<rcgen::CertifiedKey> {
    let names = vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "::1".to_string(),
    ];
    rcgen::generate_simple_self_signed(names)
        .map_err(|e| Error::runtime(format!("cannot generate a certificate: {e}")))
}

/// TLS with a self-signed certificate for localhost, 127.0.0.1 and ::1, made now; with
/// `client_ca`, every client must present a certificate that CA signed.
pub fn server_self_signed(client_ca: Option<&Path>) -> Result<ServerTls> {
    let ck = generate_self_signed()?;
    let der = ck.cert.der().clone();
    let key = PrivateKeyDer::try_from(ck.key_pair.serialize_der())
        .map_err(|e| Error::runtime(format!("generated key unusable: {e}")))?;
    Ok(ServerTls {
        fingerprint: fingerprint(&der),
        generated_pem: Some(ck.cert.pem()),
        config: build_server(vec![der], key, client_ca)?,
    })
}

/// A generated certificate (and, when given, its key) written to a fresh private
/// directory under the temporary directory, for other processes and foreign clients
/// to read; the directory is removed when this is dropped.
pub struct CertFiles {
    dir: std::path::PathBuf,
    pub cert: std::path::PathBuf,
    pub key: Option<std::path::PathBuf>,
}

impl CertFiles {
    /// Writes `cert_pem` (and `key_pem`) into `wirebench-<who>-<pid>-<ms>/`.
    pub fn write(who: &str, cert_pem: &str, key_pem: Option<&str>) -> Result<CertFiles> {
        use std::os::unix::fs::DirBuilderExt;
        let ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        let dir = std::env::temp_dir().join(format!("wirebench-{who}-{}-{ms}", std::process::id()));
        let fail = |e: std::io::Error| {
            Error::runtime(format!(
                "cannot write the generated certificate under {}: {e}",
                std::env::temp_dir().display()
            ))
        };
        // Created with their modes, not chmod-ed after: the key is never readable by
        // others, not even for a moment. A fresh directory (not create_dir_all) so one
        // planted there beforehand is refused rather than used.
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(fail)?;
        let files = CertFiles {
            cert: dir.join("cert.pem"),
            key: key_pem.map(|_| dir.join("key.pem")),
            dir,
        };
        write_new(&files.cert, cert_pem.as_bytes(), 0o644).map_err(fail)?;
        if let (Some(path), Some(pem)) = (&files.key, key_pem) {
            write_new(path, pem.as_bytes(), 0o600).map_err(fail)?;
        }
        Ok(files)
    }
}

impl Drop for CertFiles {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Writes a file that must not exist yet, created with `mode` (before the umask).
fn write_new(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)?
        .write_all(bytes)
}

/// How a client decides to trust a server.
#[derive(Clone, Debug)]
pub enum Trust {
    /// The operating system's root certificates.
    System,
    /// Only the CA certificates in this PEM file.
    CaFile(std::path::PathBuf),
    /// CA certificates given as PEM text (the built-in server's own certificate).
    CaPem(String),
    /// Anything (self-signed servers): signatures are still checked, names and chains are not.
    Insecure,
}

/// A client certificate and its key, PEM files (`--cert`, `--key`): mutual TLS.
#[derive(Clone, Debug, PartialEq)]
pub struct Identity {
    pub cert: std::path::PathBuf,
    pub key: std::path::PathBuf,
}

/// A client's TLS: whom it trusts, the certificate it shows (if any), and the
/// application protocols it offers by ALPN, in order of preference.
pub fn client_config(
    trust: &Trust,
    identity: Option<&Identity>,
    alpn: &[&[u8]],
) -> Result<Arc<ClientConfig>> {
    let builder = ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::runtime(format!("TLS setup failed: {}", words::config_failure(&e))))?;
    let mut roots = RootCertStore::empty();
    let builder = match trust {
        Trust::Insecure => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCert(provider()))),
        Trust::CaFile(p) => {
            add_roots(&mut roots, read_certs(p)?, &p.display().to_string())?;
            builder.with_root_certificates(roots)
        }
        Trust::CaPem(pem) => {
            let certs: Vec<_> = CertificateDer::pem_slice_iter(pem.as_bytes())
                .collect::<std::result::Result<_, _>>()
                .map_err(|e| Error::runtime(format!("CA PEM unusable: {}", words::pem(&e))))?;
            add_roots(&mut roots, certs, "the built-in certificate")?;
            builder.with_root_certificates(roots)
        }
        Trust::System => {
            let found = rustls_native_certs::load_native_certs();
            for c in found.certs {
                let _ = roots.add(c);
            }
            builder.with_root_certificates(roots)
        }
    };
    let mut cfg = match identity {
        None => builder.with_no_client_auth(),
        Some(id) => builder
            .with_client_auth_cert(read_certs(&id.cert)?, read_key(&id.key)?)
            .map_err(|e| {
                Error::usage(format!(
                    "the client certificate {} and key {} do not work together: {}",
                    id.cert.display(),
                    id.key.display(),
                    words::config_failure(&e)
                ))
            })?,
    };
    cfg.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Ok(Arc::new(cfg))
}

/// The server name to verify: a DNS name or an IP address.
pub fn server_name(host: &str) -> Result<ServerName<'static>> {
    ServerName::try_from(host.to_string())
        .map_err(|_| Error::usage(format!("'{host}' is not a usable TLS server name")))
}

/// `--insecure`: accepts any certificate, still checks the handshake signatures.
#[derive(Debug)]
struct AcceptAnyCert(Arc<CryptoProvider>);

impl ServerCertVerifier for AcceptAnyCert {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
