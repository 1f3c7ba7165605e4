//! Arbitrary text as a target URL, through each load's parser: HTTP's (`http://`,
//! `https://`), WebSocket's (`ws://`, `wss://`) and AMQP's (`amqp://`, `amqps://`,
//! amq-protocol's parser and the url crate's). Nothing may panic; a refusal is one
//! sentence (breaking a line only where the URL it quotes does); an HTTP or WebSocket
//! URL written back from what was parsed (the scheme, the Host header's authority,
//! the path) parses to the same target, so the Host header sent names the host asked
//! for; an AMQP target has a host. Run: `cargo +nightly fuzz run urls`.

use crate::proto::amqp::url::Target;
use crate::proto::http::url as http;
use crate::proto::ws::url as ws;

/// One input, as the fuzz target runs it.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match http::parse(text) {
        Ok(u) => {
            let scheme = if u.tls { "https" } else { "http" };
            let again = format!("{scheme}://{}{}", u.authority(), u.path);
            assert_eq!(
                http::parse(&again).as_ref(),
                Ok(&u),
                "{text:?} as {again:?}"
            );
        }
        Err(why) => one_line(&why, text),
    }
    match ws::parse(text) {
        Ok(u) => {
            let again = ws::text(&u);
            assert_eq!(ws::parse(&again).as_ref(), Ok(&u), "{text:?} as {again:?}");
        }
        Err(why) => one_line(&why, text),
    }
    match Target::parse(text) {
        Ok(t) => assert!(!t.host.is_empty(), "{text:?}: {t:?}"),
        Err(e) => {
            assert_eq!(e.exit_code(), 2);
            one_line(&e.to_string(), text);
        }
    }
}

/// A refusal is one sentence: it breaks no line the URL it quotes did not bring.
fn one_line(why: &str, text: &str) {
    assert!(!why.is_empty(), "an empty refusal of {text:?}");
    if !text.contains(char::is_control) {
        assert!(!why.contains('\n'), "{}", why.escape_debug());
    }
}
