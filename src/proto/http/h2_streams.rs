//! The HTTP/2 client's streams and what it sends: each request is a stream, started
//! (its HEADERS written) while the server's SETTINGS_MAX_CONCURRENT_STREAMS allows,
//! its body sent in DATA frames as far as the connection's and the stream's send
//! windows and the server's max frame size allow; the rest waits for WINDOW_UPDATE.
//! The response side of a stream (its status, its body checked against the request
//! body) is kept here too.

use crate::engine::session::Lane;
use crate::proto::h2::flow::{RecvWindow, SendWindow};
use crate::proto::h2::write;

/// Body bytes of a response with a status the run does not accept kept for its words.
pub const BODY_WORDS: usize = 32;
/// No code came in a response's header blocks (`Stream::code`, `h2_exchange::Head`).
pub const NO_CODE: u16 = u16::MAX;

/// One request in flight.
pub struct Stream {
    pub id: u32,
    /// HEADERS written (else it waits for a place under the server's stream limit).
    pub started: bool,
    /// Request body bytes sent.
    pub sent: usize,
    pub send: SendWindow,
    pub recv: RecvWindow,
    /// The final status, 0 until the response's HEADERS came.
    pub status: u16,
    /// The protocol's own code from the response's header blocks (gRPC's
    /// grpc-status), `NO_CODE` until one came.
    pub code: u16,
    /// `--expect-echo`: body bytes compared so far, and whether any differed.
    pub echo_pos: usize,
    pub echo_bad: bool,
    /// The start of the body while the status is one the run does not accept.
    pub words: [u8; BODY_WORDS],
    pub words_len: u8,
    /// `keep_words` is inside an HTML tag.
    pub in_tag: bool,
}

impl Stream {
    pub fn new(id: u32, send: u32, recv: u32) -> Stream {
        Stream {
            id,
            started: false,
            sent: 0,
            send: SendWindow::new(send),
            recv: RecvWindow::new(recv),
            status: 0,
            code: NO_CODE,
            echo_pos: 0,
            echo_bad: false,
            words: [0; BODY_WORDS],
            words_len: 0,
            in_tag: false,
        }
    }

    /// Compares the next piece of the response body with `expected`.
    #[inline]
    pub fn check_echo(&mut self, expected: &[u8], piece: &[u8]) {
        let end = self.echo_pos + piece.len();
        if end > expected.len() || expected[self.echo_pos..end] != *piece {
            self.echo_bad = true;
        }
        self.echo_pos = end;
    }

    /// Keeps the start of a wrong response's body as text: HTML's tags left out and
    /// runs of white space made one space, so the few bytes kept carry an error page's
    /// words (nginx's "400 No required SSL certificate was sent"), not its markup.
    pub fn keep_words(&mut self, piece: &[u8]) {
        for &b in piece {
            let at = self.words_len as usize;
            if at == BODY_WORDS {
                return;
            }
            match b {
                b'<' => self.in_tag = true,
                b'>' if self.in_tag => self.in_tag = false,
                _ if self.in_tag => {}
                b' ' | b'\t' | b'\r' | b'\n' => {
                    if at > 0 && self.words[at - 1] != b' ' {
                        self.words[at] = b' ';
                        self.words_len += 1;
                    }
                }
                _ => {
                    self.words[at] = b;
                    self.words_len += 1;
                }
            }
        }
    }
}

/// The lane of stream `id`: requests in flight on one connection have distinct lanes
/// (unless 65,535 streams open and close while one stays), and never `Lane::ANY`.
#[inline]
pub fn lane(id: u32) -> Lane {
    Lane(((id >> 1) % 0xffff + 1) as u16)
}

/// What the sending side needs of the connection: the request, the limits in force.
pub struct Sender<'a> {
    pub block: &'a [u8],
    pub body: &'a [u8],
    pub max_frame: u32,
    pub max_streams: u32,
}

/// Starts the streams the server's limit now allows and sends every body as far as
/// the windows allow, appending the frames to `out`. `active`: streams started and
/// not yet ended, kept up to date.
pub fn pump(
    s: &Sender<'_>,
    streams: &mut [Stream],
    conn: &mut SendWindow,
    active: &mut u32,
    out: &mut Vec<u8>,
) {
    for st in streams.iter_mut() {
        if !st.started {
            if *active >= s.max_streams {
                // Streams start in order: none after this one may start either.
                break;
            }
            st.started = true;
            *active += 1;
            write::headers(out, st.id, s.body.is_empty(), s.block, s.max_frame);
        }
        send_body(s, st, conn, out);
        if conn.available() == 0 {
            return;
        }
    }
}

/// As much of `st`'s body as the windows allow, in DATA frames of at most the
/// server's max frame size; END_STREAM on the last.
fn send_body(s: &Sender<'_>, st: &mut Stream, conn: &mut SendWindow, out: &mut Vec<u8>) {
    while st.sent < s.body.len() {
        let n = (s.body.len() - st.sent)
            .min(conn.available())
            .min(st.send.available())
            .min(s.max_frame as usize);
        if n == 0 {
            return;
        }
        let end = st.sent + n == s.body.len();
        write::data(out, st.id, end, &s.body[st.sent..st.sent + n]);
        st.sent += n;
        conn.take(n);
        st.send.take(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(pieces: &[&[u8]]) -> String {
        let mut st = Stream::new(1, 0, 0);
        for p in pieces {
            st.keep_words(p);
        }
        String::from_utf8_lossy(&st.words[..st.words_len as usize]).into_owned()
    }

    #[test]
    fn an_error_page_is_kept_as_its_words_at_any_split() {
        let page = b"<html>\r\n<head><title>400 No required SSL certificate was sent</title></head>\r\n<body>";
        for cut in 0..page.len() {
            let (a, b) = page.split_at(cut);
            assert_eq!(kept(&[a, b]), "400 No required SSL certificate ");
        }
        assert_eq!(kept(&[b"plain  text\n\nbody"]), "plain text body");
    }
}
