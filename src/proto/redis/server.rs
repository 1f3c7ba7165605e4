//! `serve redis`: the commands a Redis benchmark and redis-cli need, on the thread's
//! store (store.rs): PING, ECHO, SET, GET, DEL, INCR, EXISTS, MGET, MSET, DBSIZE,
//! FLUSHDB, FLUSHALL, QUIT, and what clients say first: HELLO, AUTH (any password is
//! accepted: the server has no users), SELECT, COMMAND, CONFIG GET (`save`,
//! `appendonly`, as redis-benchmark asks). Requests are RESP arrays or inline lines.
//! An unknown command gets `-ERR unknown command`; a request past a cap gets an error
//! and the connection is closed (`too_large`); bytes that are not RESP likewise
//! (a protocol error). Other connections are not affected.

use super::codec::{
    int_bytes, parse_int, parse_request, push_bulk, push_header, RequestLimits, Scan,
};
use super::figures::ServerFigures;
use super::store::{Thread, DATABASES};
use crate::server::session::{Reply, ServerFactory, ServerSession};
use std::cell::RefCell;
use std::rc::Rc;

/// Replies made from one read before the session yields (`Reply::More`), so
/// pipelined MGETs of large values cannot grow the output past this plus one reply.
const MAX_OUT_BATCH: usize = 256 * 1024;

/// The Redis version whose replies this server gives (HELLO; clients read it).
const COMPATIBLE_VERSION: &[u8] = b"7.0.0";

pub struct RedisHandlerFactory {
    limits: RequestLimits,
}

impl RedisHandlerFactory {
    pub fn new(limits: RequestLimits) -> Self {
        RedisHandlerFactory { limits }
    }
}

impl ServerFactory for RedisHandlerFactory {
    type Session = RedisHandler;
    /// The keyspace of one server thread, shared by its connections (as redis-server's
    /// one thread shares one): no lock, as only that thread ever touches it.
    type Thread = Rc<RefCell<Thread>>;

    /// A session with a keyspace of its own (the runtime uses `session_in`).
    fn session(&self) -> RedisHandler {
        self.session_in(&self.thread_state(), 0)
    }

    fn thread_state(&self) -> Rc<RefCell<Thread>> {
        Rc::new(RefCell::new(Thread::default()))
    }

    fn session_in(&self, store: &Rc<RefCell<Thread>>, _now_ns: u64) -> RedisHandler {
        RedisHandler {
            limits: self.limits,
            requests: 0,
            db: 0,
            resp3: false,
            store: Rc::clone(store),
        }
    }
}

/// One connection: its database, its protocol version, its count, its thread's keyspace.
pub struct RedisHandler {
    limits: RequestLimits,
    requests: u64,
    db: u8,
    resp3: bool,
    store: Rc<RefCell<Thread>>,
}

/// What a command asks of the connection after its reply.
enum After {
    Go,
    Close,
}

impl ServerSession for RedisHandler {
    type Figures = ServerFigures;

    fn on_bytes(&mut self, input: &[u8], out: &mut Vec<u8>, figures: &mut ServerFigures) -> Reply {
        // One count increment per read batch, so the keyspace can be borrowed while
        // `self` is (a borrow flag, no lock: only this thread holds the keyspace).
        let store = Rc::clone(&self.store);
        let t = &mut *store.borrow_mut();
        let mut used = 0;
        loop {
            if used > 0 && out.len() >= MAX_OUT_BATCH {
                return Reply::More(used);
            }
            let rest = &input[used..];
            let mut args = std::mem::take(&mut t.args);
            let scan = parse_request(rest, &self.limits, &mut args);
            let reply = match scan {
                Scan::Incomplete => None,
                Scan::TooLarge => {
                    figures.error_replies += 1;
                    out.extend_from_slice(
                        b"-ERR Protocol error: request past the server's caps\r\n",
                    );
                    Some(Reply::TooLarge)
                }
                Scan::Invalid => {
                    figures.error_replies += 1;
                    figures.protocol_errors += 1;
                    out.extend_from_slice(b"-ERR Protocol error: not a RESP request\r\n");
                    Some(Reply::Close)
                }
                Scan::Whole { len, .. } => {
                    used += len;
                    if rest[0] != b'*' {
                        figures.inline_commands += 1;
                    }
                    if args.is_empty() {
                        None
                    } else {
                        self.requests += 1;
                        let call = Call {
                            req: rest,
                            args: &args,
                        };
                        match self.command(t, &call, out, figures) {
                            After::Go => None,
                            After::Close => Some(Reply::Close),
                        }
                    }
                }
            };
            t.args = args;
            if let Some(r) = reply {
                return r;
            }
            if matches!(scan, Scan::Incomplete) {
                return Reply::Consumed(used);
            }
        }
    }

    #[inline]
    fn take_requests(&mut self) -> u64 {
        std::mem::take(&mut self.requests)
    }
}

/// One command's words: `args` index into `req`.
struct Call<'a> {
    req: &'a [u8],
    args: &'a [(u32, u32)],
}

impl<'a> Call<'a> {
    fn n(&self) -> usize {
        self.args.len()
    }

    fn arg(&self, i: usize) -> &'a [u8] {
        let (at, len) = self.args[i];
        &self.req[at as usize..(at + len) as usize]
    }

    fn name(&self) -> &'a [u8] {
        self.arg(0)
    }

    /// Whether the command has a count of arguments it takes (`ok`); if not, the
    /// error reply is made.
    fn arity(&self, ok: bool, out: &mut Vec<u8>, figures: &mut ServerFigures) -> bool {
        if !ok {
            wrong_arity(out, figures, self.name());
        }
        ok
    }
}

fn is(name: &[u8], upper: &[u8]) -> bool {
    name.eq_ignore_ascii_case(upper)
}

fn simple(out: &mut Vec<u8>, text: &[u8]) {
    out.push(b'+');
    out.extend_from_slice(text);
    out.extend_from_slice(b"\r\n");
}

/// An error reply, counted.
fn error(out: &mut Vec<u8>, figures: &mut ServerFigures, text: &[u8]) {
    figures.error_replies += 1;
    out.push(b'-');
    out.extend_from_slice(text);
    out.extend_from_slice(b"\r\n");
}

/// Appends `bytes` with CR and LF replaced, at most `cap` of them (error texts).
fn sanitized(out: &mut Vec<u8>, bytes: &[u8], cap: usize) {
    out.extend(
        bytes
            .iter()
            .take(cap)
            .map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b }),
    );
}

fn wrong_arity(out: &mut Vec<u8>, figures: &mut ServerFigures, name: &[u8]) {
    figures.error_replies += 1;
    out.extend_from_slice(b"-ERR wrong number of arguments for '");
    sanitized(out, &name.to_ascii_lowercase(), 128);
    out.extend_from_slice(b"' command\r\n");
}

const NOT_AN_INTEGER: &[u8] = b"ERR value is not an integer or out of range";

/// `+OK`, or the store's refusal past its cap (as Redis past `maxmemory`).
fn stored(ok: bool, out: &mut Vec<u8>, figures: &mut ServerFigures) {
    if ok {
        simple(out, b"OK");
    } else {
        figures.oom += 1;
        error(
            out,
            figures,
            b"OOM command not allowed when used memory > 'maxmemory'.",
        );
    }
}

/// `-ERR unknown command 'NAME', with args beginning with: ...`, as Redis says it.
fn unknown_command(call: &Call, out: &mut Vec<u8>, figures: &mut ServerFigures) {
    figures.unknown_commands += 1;
    figures.error_replies += 1;
    out.extend_from_slice(b"-ERR unknown command '");
    sanitized(out, call.name(), 128);
    out.extend_from_slice(b"', with args beginning with: ");
    let mut room = 128usize;
    for i in 1..call.n() {
        let w = call.arg(i);
        if room == 0 {
            break;
        }
        out.push(b'\'');
        sanitized(out, w, room);
        out.extend_from_slice(b"' ");
        room = room.saturating_sub(w.len());
    }
    out.extend_from_slice(b"\r\n");
}

impl RedisHandler {
    fn null(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(if self.resp3 { b"_\r\n" } else { b"$-1\r\n" });
    }

    /// A map header: `%n` in RESP3, an array of 2n in RESP2.
    fn map(&self, out: &mut Vec<u8>, pairs: i64) {
        if self.resp3 {
            push_header(out, b'%', pairs);
        } else {
            push_header(out, b'*', 2 * pairs);
        }
    }

    /// Runs one command and appends its reply.
    fn command(
        &mut self,
        t: &mut Thread,
        call: &Call,
        out: &mut Vec<u8>,
        figures: &mut ServerFigures,
    ) -> After {
        if self.data_command(t, call, out, figures) || self.server_command(t, call, out, figures) {
            return After::Go;
        }
        if is(call.name(), b"QUIT") {
            simple(out, b"OK");
            return After::Close;
        }
        unknown_command(call, out, figures);
        After::Go
    }

    /// The commands on the keys of the selected database; false: `call` is none of them.
    fn data_command(
        &mut self,
        t: &mut Thread,
        call: &Call,
        out: &mut Vec<u8>,
        figures: &mut ServerFigures,
    ) -> bool {
        let (n, name, db) = (call.n(), call.name(), self.db as usize);
        let a = |i| call.arg(i);
        if is(name, b"GET") {
            if call.arity(n == 2, out, figures) {
                self.bulk_or_null(out, t.dbs[db].get(a(1)));
            }
        } else if is(name, b"SET") {
            if n > 3 {
                error(out, figures, b"ERR syntax error");
            } else if call.arity(n == 3, out, figures) {
                stored(t.set(db, a(1), a(2)), out, figures);
            }
        } else if is(name, b"DEL") || is(name, b"UNLINK") {
            if call.arity(n >= 2, out, figures) {
                let gone = (1..n).filter(|&i| t.del(db, a(i))).count();
                push_header(out, b':', gone as i64);
            }
        } else if is(name, b"EXISTS") {
            if call.arity(n >= 2, out, figures) {
                let there = (1..n).filter(|&i| t.dbs[db].contains_key(a(i))).count();
                push_header(out, b':', there as i64);
            }
        } else if is(name, b"INCR") {
            if call.arity(n == 2, out, figures) {
                self.incr(t, a(1), out, figures);
            }
        } else if is(name, b"MGET") {
            if call.arity(n >= 2, out, figures) {
                push_header(out, b'*', (n - 1) as i64);
                for i in 1..n {
                    self.bulk_or_null(out, t.dbs[db].get(a(i)));
                }
            }
        } else if is(name, b"MSET") {
            if call.arity(n >= 3 && n % 2 == 1, out, figures) {
                let all = (1..n).step_by(2).all(|i| t.set(db, a(i), a(i + 1)));
                stored(all, out, figures);
            }
        } else if is(name, b"DBSIZE") {
            push_header(out, b':', t.dbs[db].len() as i64);
        } else if is(name, b"FLUSHDB") {
            t.flush(db);
            simple(out, b"OK");
        } else if is(name, b"FLUSHALL") {
            for d in 0..DATABASES {
                t.flush(d);
            }
            simple(out, b"OK");
        } else {
            return false;
        }
        true
    }

    /// The commands about the connection and the server (what clients say first, and
    /// PING and ECHO); false: `call` is none of them.
    fn server_command(
        &mut self,
        t: &mut Thread,
        call: &Call,
        out: &mut Vec<u8>,
        figures: &mut ServerFigures,
    ) -> bool {
        let (n, name) = (call.n(), call.name());
        let a = |i| call.arg(i);
        if is(name, b"PING") {
            match n {
                1 => simple(out, b"PONG"),
                2 => push_bulk(out, a(1)),
                _ => wrong_arity(out, figures, name),
            }
        } else if is(name, b"ECHO") {
            if call.arity(n == 2, out, figures) {
                push_bulk(out, a(1));
            }
        } else if is(name, b"SELECT") {
            if call.arity(n == 2, out, figures) {
                match parse_int(a(1)) {
                    Some(d) if (0..DATABASES as i64).contains(&d) => {
                        self.db = d as u8;
                        simple(out, b"OK");
                    }
                    Some(_) => error(out, figures, b"ERR DB index is out of range"),
                    None => error(out, figures, NOT_AN_INTEGER),
                }
            }
        } else if is(name, b"AUTH") {
            if call.arity(n == 2 || n == 3, out, figures) {
                simple(out, b"OK");
            }
        } else if is(name, b"HELLO") {
            self.hello(t, call, out, figures);
        } else if is(name, b"COMMAND") {
            // No command table: clients (redis-cli's hints) go on without one.
            if n >= 2 && is(a(1), b"COUNT") {
                push_header(out, b':', 0);
            } else if n >= 2 && is(a(1), b"DOCS") {
                self.map(out, 0);
            } else {
                push_header(out, b'*', 0);
            }
        } else if is(name, b"CONFIG") {
            self.config(call, out, figures);
        } else {
            return false;
        }
        true
    }

    /// `CONFIG GET save|appendonly|*`, what redis-benchmark asks.
    fn config(&self, call: &Call, out: &mut Vec<u8>, figures: &mut ServerFigures) {
        if !(call.n() == 3 && is(call.arg(1), b"GET")) {
            return error(out, figures, b"ERR only CONFIG GET is supported");
        }
        let p = call.arg(2);
        let known: &[(&[u8], &[u8])] = &[(b"save", b""), (b"appendonly", b"no")];
        let hits: Vec<_> = known
            .iter()
            .filter(|(k, _)| is(p, k) || p == b"*")
            .collect();
        self.map(out, hits.len() as i64);
        for (k, v) in hits {
            push_bulk(out, k);
            push_bulk(out, v);
        }
    }

    fn bulk_or_null(&self, out: &mut Vec<u8>, value: Option<&Vec<u8>>) {
        match value {
            Some(v) => push_bulk(out, v),
            None => self.null(out),
        }
    }

    fn incr(&mut self, t: &mut Thread, key: &[u8], out: &mut Vec<u8>, figures: &mut ServerFigures) {
        let db = self.db as usize;
        let now = match t.dbs[db].get(key) {
            None => Some(0),
            Some(v) => parse_int(v),
        };
        let Some(now) = now else {
            return error(out, figures, NOT_AN_INTEGER);
        };
        let Some(next) = now.checked_add(1) else {
            return error(out, figures, b"ERR increment or decrement would overflow");
        };
        let mut buf = [0u8; 20];
        if t.set(db, key, int_bytes(next, &mut buf)) {
            push_header(out, b':', next);
        } else {
            stored(false, out, figures);
        }
    }

    /// `HELLO [protover [AUTH user pass] [SETNAME name]]`: switches the protocol and
    /// describes the server.
    fn hello(
        &mut self,
        t: &mut Thread,
        call: &Call,
        out: &mut Vec<u8>,
        figures: &mut ServerFigures,
    ) {
        if call.n() >= 2 {
            match parse_int(call.arg(1)) {
                Some(2) => self.resp3 = false,
                Some(3) => self.resp3 = true,
                Some(_) => return error(out, figures, b"NOPROTO unsupported protocol version"),
                None => {
                    return error(
                        out,
                        figures,
                        b"ERR Protocol version is not an integer or out of range",
                    )
                }
            }
        }
        t.hellos += 1;
        self.map(out, 7);
        push_bulk(out, b"server");
        push_bulk(out, b"redis");
        push_bulk(out, b"version");
        push_bulk(out, COMPATIBLE_VERSION);
        push_bulk(out, b"proto");
        push_header(out, b':', if self.resp3 { 3 } else { 2 });
        push_bulk(out, b"id");
        push_header(out, b':', t.hellos as i64);
        push_bulk(out, b"mode");
        push_bulk(out, b"standalone");
        push_bulk(out, b"role");
        push_bulk(out, b"master");
        push_bulk(out, b"modules");
        push_header(out, b'*', 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> RedisHandler {
        RedisHandlerFactory::new(RequestLimits::default()).session()
    }

    /// Feeds `input` whole; returns the replies and what the session said.
    fn talk(s: &mut RedisHandler, input: &[u8]) -> (String, Reply, ServerFigures) {
        let (mut out, mut fig) = (Vec::new(), ServerFigures::default());
        let r = s.on_bytes(input, &mut out, &mut fig);
        (String::from_utf8_lossy(&out).into_owned(), r, fig)
    }

    #[test]
    fn commands_answer_with_exact_bytes() {
        // A fresh thread: its own store.
        std::thread::spawn(|| {
            let mut s = session();
            let script: &[(&str, &str)] = &[
                ("*1\r\n$4\r\nPING\r\n", "+PONG\r\n"),
                ("PING hi\r\n", "$2\r\nhi\r\n"),
                ("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\nv1\r\n", "+OK\r\n"),
                ("*2\r\n$3\r\nget\r\n$1\r\nk\r\n", "$2\r\nv1\r\n"),
                ("GET nope\r\n", "$-1\r\n"),
                ("INCR n\r\nINCR n\r\n", ":1\r\n:2\r\n"),
                ("INCR k\r\n", "-ERR value is not an integer or out of range\r\n"),
                ("MSET a 1 b 2\r\n", "+OK\r\n"),
                ("MGET a x b\r\n", "*3\r\n$1\r\n1\r\n$-1\r\n$1\r\n2\r\n"),
                ("EXISTS a b x\r\n", ":2\r\n"),
                ("DEL a x\r\n", ":1\r\n"),
                ("ECHO hey\r\n", "$3\r\nhey\r\n"),
                ("MSET a\r\n", "-ERR wrong number of arguments for 'mset' command\r\n"),
                ("FOO bar\r\n", "-ERR unknown command 'FOO', with args beginning with: 'bar' \r\n"),
                ("SELECT 1\r\nGET k\r\nSELECT 16\r\n", "+OK\r\n$-1\r\n-ERR DB index is out of range\r\n"),
                ("CONFIG GET save\r\n", "*2\r\n$4\r\nsave\r\n$0\r\n\r\n"),
                ("HELLO 3\r\nGET k\r\n", "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$5\r\n7.0.0\r\n$5\r\nproto\r\n:3\r\n$2\r\nid\r\n:1\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n_\r\n"),
            ];
            for (req, want) in script {
                let (got, r, _) = talk(&mut s, req.as_bytes());
                assert_eq!(got, *want, "{req:?}");
                assert_eq!(r, Reply::Consumed(req.len()), "{req:?}");
            }
            assert_eq!(s.take_requests(), 21);
            let (got, r, _) = talk(&mut s, b"QUIT\r\nPING\r\n");
            assert_eq!((got.as_str(), r), ("+OK\r\n", Reply::Close));
        })
        .join()
        .expect("no panic");
    }

    #[test]
    fn partial_requests_wait_and_caps_close() {
        std::thread::spawn(|| {
            let mut s = session();
            let req = b"*2\r\n$4\r\nECHO\r\n$5\r\nhello\r\n";
            for cut in 0..req.len() {
                let (got, r, _) = talk(&mut s, &req[..cut]);
                assert_eq!((got.as_str(), r), ("", Reply::Consumed(0)), "cut {cut}");
            }
            let (got, r, fig) = talk(&mut s, b"PING\r\n*1\r\n$4294967296\r\n");
            assert_eq!(
                got,
                "+PONG\r\n-ERR Protocol error: request past the server's caps\r\n"
            );
            assert_eq!((r, fig.error_replies), (Reply::TooLarge, 1));
            let (_, r, fig) = talk(&mut s, b"*1\r\n:1\r\n");
            assert_eq!((r, fig.protocol_errors), (Reply::Close, 1));
        })
        .join()
        .expect("no panic");
    }
}
