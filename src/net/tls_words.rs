//! rustls' errors in words: one sentence each, saying what happened and what to do,
//! for every error a user can meet (a certificate refused, an alert from the peer, a
//! peer that does not speak TLS or shares no parameters with us, a key that does not
//! fit its certificate). rustls' own `Display` prints its enums' debug text
//! (`invalid peer certificate: Other(OtherError(CaUsedAsEndEntity))`); nothing here
//! does: where no sentence of its own is written, a variant's name is put in words
//! (`NoCipherSuitesInCommon`: "no cipher suites in common"), never its fields.

use rustls::{AlertDescription, CertificateError, Error, PeerIncompatible};

/// How to make a leaf certificate for a test server, named where one is missing.
pub const LEAF_HOWTO: &str = "openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=localhost -addext basicConstraints=critical,CA:FALSE -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout key.pem -out cert.pem";

/// What the client may do about a certificate it refused.
const OR_INSECURE: &str = "or skip verification with --insecure";

/// A client's failed TLS handshake (or session) in one sentence, without the peer's
/// address (the caller leads with it).
pub fn failure(e: &Error) -> String {
    match e {
        Error::InvalidCertificate(c) => certificate(c),
        Error::AlertReceived(a) => alert(*a),
        Error::InvalidMessage(_) | Error::InappropriateMessage { .. } => {
            "the server's answer is not TLS (a plain-text server? then leave out --tls, or use http:// or ws://)".into()
        }
        Error::InappropriateHandshakeMessage {
            got_type: rustls::HandshakeType::ClientHello,
            ..
        } => "the server answered with a TLS ClientHello, this client's own sent back: it echoes, it is not a TLS server (leave out --tls)".into(),
        Error::InappropriateHandshakeMessage { .. } => {
            "the server sent a TLS handshake message out of order, so it does not speak TLS as rustls does".into()
        }
        Error::PeerIncompatible(p) => incompatible(p),
        Error::PeerMisbehaved(p) => format!(
            "the server broke the TLS protocol ({}), so the connection was dropped",
            name_words(&variant(p))
        ),
        Error::NoCertificatesPresented => {
            format!("the server sent no certificate: give it one, {OR_INSECURE}")
        }
        Error::DecryptError => {
            "a TLS record from the server did not decrypt (a corrupted stream or a broken server)"
                .into()
        }
        Error::PeerSentOversizedRecord => {
            "the server sent a TLS record larger than TLS allows".into()
        }
        Error::NoApplicationProtocol => {
            "the server supports none of the application protocols (ALPN) offered".into()
        }
        Error::InconsistentKeys(_) => key_mismatch(),
        Error::General(text) => format!("TLS failed: {text}"),
        Error::Other(o) => format!("TLS failed: {}", other_words(&o.0)),
        other => format!("TLS failed: {}", name_words(&variant(other))),
    }
}

/// Why a server's certificate and key could not be set up, in words.
pub fn config_failure(e: &Error) -> String {
    match e {
        Error::InconsistentKeys(_) => key_mismatch(),
        Error::General(text) => text.clone(),
        other => short(other),
    }
}

/// A certificate refused as a trust anchor (`--ca`), in a few words.
pub fn short(e: &Error) -> String {
    match e {
        Error::InvalidCertificate(CertificateError::Other(o)) | Error::Other(o) => {
            other_words(&o.0)
        }
        Error::InvalidCertificate(c) => name_words(&variant(c)),
        other => name_words(&variant(other)),
    }
}

/// A PEM file that does not parse, in words (pki-types prints its markers as bytes).
pub fn pem(e: &rustls::pki_types::pem::Error) -> String {
    use rustls::pki_types::pem::Error as P;
    match e {
        P::MissingSectionEnd { .. } => "a PEM section has no END line".into(),
        P::IllegalSectionStart { .. } => "a PEM BEGIN line is not valid".into(),
        P::Base64Decode(_) => "a PEM section is not valid base64".into(),
        P::Io(e) => e.to_string(),
        P::NoItemsFound => "it holds no PEM section".into(),
        P::SectionTooLarge => "a PEM section is larger than 10 MB".into(),
        other => name_words(&variant(other)),
    }
}

/// "the private key does not belong to the certificate", for a server's files.
pub fn key_mismatch() -> String {
    "the private key does not belong to the certificate (give the key the certificate was made for)"
        .into()
}

fn certificate(c: &CertificateError) -> String {
    use CertificateError as C;
    let what = match c {
        C::UnknownIssuer => format!(
            "the server's certificate is not signed by a CA this client trusts: give that CA (or, for a self-signed certificate, the certificate itself) with --ca FILE, {OR_INSECURE}"
        ),
        C::NotValidForName | C::NotValidForNameContext { .. } => {
            let names = match c {
                C::NotValidForNameContext { presented, .. } if !presented.is_empty() => {
                    format!(" (it names {})", presented.join(", "))
                }
                _ => String::new(),
            };
            format!(
                "the server's certificate is not for the name connected to{names}: connect by a name it holds, {OR_INSECURE}"
            )
        }
        C::Expired | C::ExpiredContext { .. } => {
            format!("the server's certificate has expired: renew it, {OR_INSECURE}")
        }
        C::NotValidYet | C::NotValidYetContext { .. } => format!(
            "the server's certificate is not valid yet (check both machines' clocks), {OR_INSECURE}"
        ),
        C::Revoked => "the server's certificate has been revoked".into(),
        C::BadSignature => format!(
            "the server's certificate is not correctly signed by its issuer: give the CA that really signed it with --ca FILE, {OR_INSECURE}"
        ),
        C::BadEncoding => "the server's certificate is not valid DER".into(),
        C::InvalidPurpose | C::InvalidPurposeContext { .. } => format!(
            "the server's certificate is not for TLS servers (its extended key usage lacks serverAuth): make one with extendedKeyUsage=serverAuth, {OR_INSECURE}"
        ),
        C::UnhandledCriticalExtension => format!(
            "the server's certificate has a critical extension this client cannot check, {OR_INSECURE}"
        ),
        C::Other(o) => return other_certificate(&o.0),
        other => format!(
            "the server's certificate was refused ({}), {OR_INSECURE}",
            name_words(&variant(other))
        ),
    };
    what
}

/// What webpki found that rustls has no variant of its own for (`CertificateError::Other`).
fn other_certificate(e: &std::sync::Arc<dyn std::error::Error + Send + Sync>) -> String {
    use webpki::Error as W;
    match e.downcast_ref::<W>() {
        Some(W::CaUsedAsEndEntity) => format!(
            "the server's certificate is a CA certificate (basicConstraints CA:TRUE), which may sign server certificates but not be one: give the server a leaf certificate (e.g. {LEAF_HOWTO}) and pass it or its CA with --ca, {OR_INSECURE}"
        ),
        Some(W::EndEntityUsedAsCa) => format!(
            "a certificate that signed the server's certificate is not a CA (basicConstraints CA:FALSE or none): sign the server's certificate with a CA certificate, {OR_INSECURE}"
        ),
        Some(W::UnsupportedCertVersion) => format!(
            "the server's certificate is not an X.509 version 3 certificate: make a v3 one (e.g. {LEAF_HOWTO}), {OR_INSECURE}"
        ),
        Some(W::CertDistrusted) => format!("the server's certificate is distrusted, {OR_INSECURE}"),
        Some(w) => format!(
            "the server's certificate chain failed verification ({}), {OR_INSECURE}",
            name_words(&variant(w))
        ),
        None => format!(
            "the server's certificate was refused ({}), {OR_INSECURE}",
            other_words(e)
        ),
    }
}

/// Another error inside rustls' `Other`: webpki's by its name in words, anything
/// else by its own text.
fn other_words(e: &std::sync::Arc<dyn std::error::Error + Send + Sync>) -> String {
    match e.downcast_ref::<webpki::Error>() {
        Some(w) => name_words(&variant(w)),
        None => e.to_string(),
    }
}

fn alert(a: AlertDescription) -> String {
    use AlertDescription as A;
    match a {
        A::HandshakeFailure => "the server refused the TLS handshake (alert: handshake failure): it may want a client certificate, a TLS version or cipher suite this client does not offer, or another server name".into(),
        A::ProtocolVersion => "the server speaks neither TLS 1.2 nor TLS 1.3 (alert: protocol version)".into(),
        A::CertificateRequired | A::BadCertificate | A::UnknownCA => format!(
            "the server wants a client certificate it trusts: give one with --cert and --key (alert: {})",
            alert_name(a)
        ),
        A::UnrecognisedName => "the server does not serve the name this client asked for (alert: unrecognised name): connect by a name the server serves".into(),
        A::InsufficientSecurity => "the server wants stronger TLS parameters than this client offers (alert: insufficient security)".into(),
        A::AccessDenied => "the server refused this client (alert: access denied)".into(),
        a => format!("the server ended the TLS handshake with the alert: {}", alert_name(a)),
    }
}

/// A TLS alert's name in words ("handshake failure"), or its number.
fn alert_name(a: AlertDescription) -> String {
    match a.as_str() {
        Some(name) => name_words(name),
        None => format!("number {}", u8::from(a)),
    }
}

fn incompatible(p: &PeerIncompatible) -> String {
    use PeerIncompatible as P;
    let what = match p {
        P::NoCipherSuitesInCommon => "no cipher suite",
        P::NoKxGroupsInCommon => "no key exchange group",
        P::NoSignatureSchemesInCommon => "no signature scheme",
        P::ServerTlsVersionIsDisabledByOurConfig => "no TLS version (it chose one this client does not offer)",
        _ => {
            return format!(
                "the server's TLS settings do not fit this client's ({}): this client offers TLS 1.2 and 1.3 with rustls' safe defaults",
                name_words(&variant(p))
            )
        }
    };
    format!(
        "the server and this client share {what}: this client offers TLS 1.2 and 1.3 with rustls' safe defaults"
    )
}

/// A variant's name from its debug form, without any fields: words are made from it
/// (`name_words`), the fields are never shown.
fn variant(v: &impl std::fmt::Debug) -> String {
    let d = format!("{v:?}");
    let end = d
        .find(|c: char| !c.is_ascii_alphanumeric())
        .unwrap_or(d.len());
    d[..end].to_string()
}

/// `NoCipherSuitesInCommon` as "no cipher suites in common"; a run of capitals stays
/// one word (`UnknownCA`: "unknown CA").
pub fn name_words(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        let prev = i.checked_sub(1).map(|j| chars[j]);
        let next = chars.get(i + 1).copied();
        let starts_word = c.is_ascii_uppercase()
            && prev.is_some_and(|p| {
                p.is_ascii_lowercase()
                    || p.is_ascii_digit()
                    || (p.is_ascii_uppercase() && next.is_some_and(|n| n.is_ascii_lowercase()))
            });
        if starts_word {
            out.push(' ');
        }
        out.push(c);
    }
    // Words stay lower case; acronyms (two capitals or more in a row) keep theirs.
    out.split(' ')
        .map(|w| {
            if w.chars().filter(char::is_ascii_uppercase).count() > 1 {
                w.to_string()
            } else {
                w.to_ascii_lowercase()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn names_become_words() {
        assert_eq!(
            name_words("NoCipherSuitesInCommon"),
            "no cipher suites in common"
        );
        assert_eq!(name_words("UnknownCA"), "unknown CA");
        assert_eq!(name_words("CaUsedAsEndEntity"), "ca used as end entity");
        assert_eq!(name_words("HandshakeFailure"), "handshake failure");
    }

    #[test]
    fn no_error_prints_debug_text() {
        let ca = Error::InvalidCertificate(CertificateError::Other(rustls::OtherError(Arc::new(
            webpki::Error::CaUsedAsEndEntity,
        ))));
        let errors = [
            ca,
            Error::InvalidCertificate(CertificateError::UnknownIssuer),
            Error::InvalidCertificate(CertificateError::Other(rustls::OtherError(Arc::new(
                webpki::Error::PathLenConstraintViolated,
            )))),
            Error::AlertReceived(AlertDescription::HandshakeFailure),
            Error::AlertReceived(AlertDescription::DecodeError),
            Error::AlertReceived(AlertDescription::Unknown(200)),
            Error::PeerIncompatible(PeerIncompatible::NoCipherSuitesInCommon),
            Error::PeerIncompatible(PeerIncompatible::ExtendedMasterSecretExtensionRequired),
            Error::PeerMisbehaved(rustls::PeerMisbehaved::IllegalMiddleboxChangeCipherSpec),
            Error::InvalidMessage(rustls::InvalidMessage::InvalidContentType),
            Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch),
            Error::HandshakeNotComplete,
        ];
        for e in &errors {
            let s = failure(e);
            assert!(!s.contains(['{', '}']) && !s.contains("::"), "{s}");
            // A Rust name (a variant's) starts with a capital and has another inside.
            let rust_name = s.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| {
                w.starts_with(|c: char| c.is_ascii_uppercase())
                    && w.chars().any(|c| c.is_ascii_lowercase())
                    && w[1..].chars().any(|c| c.is_ascii_uppercase())
            });
            assert!(!rust_name, "{s}");
        }
        assert_eq!(
            failure(&errors[0]),
            format!("the server's certificate is a CA certificate (basicConstraints CA:TRUE), which may sign server certificates but not be one: give the server a leaf certificate (e.g. {LEAF_HOWTO}) and pass it or its CA with --ca, or skip verification with --insecure")
        );
        assert_eq!(
            failure(&errors[5]),
            "the server ended the TLS handshake with the alert: number 200"
        );
    }
}
