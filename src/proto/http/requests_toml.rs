//! The TOML form of a request set: `[[request]]` tables with a URL, and optionally a
//! method, headers, a body (inline, or `@path` for a file's bytes; `@@` starts an inline
//! body with one `@`), a weight, the statuses that count as correct and a substring
//! the response body must hold.
//!
//! ```toml
//! [[request]]
//! name = "search"                      # the summary's name (default: METHOD path)
//! method = "POST"                      # default: POST with a body, GET without
//! url = "http://127.0.0.1:8080/search"
//! headers = ["Content-Type: application/json"]
//! body = "@query.json"                 # or an inline body: body = "{\"q\": 1}"
//! weight = 7                           # default 1
//! status = "200,404"                   # default: --expect-status (2xx)
//! body_contains = "results"
//! ```

use super::raw_entry::{Body, RawEntry};
use crate::suite::cx::line_of;
use serde::Deserialize;
use toml::Spanned;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    request: Vec<Spanned<Table>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    name: Option<String>,
    method: Option<String>,
    url: Spanned<String>,
    #[serde(default)]
    headers: Vec<Spanned<String>>,
    body: Option<Spanned<String>>,
    weight: Option<Spanned<i64>>,
    status: Option<Spanned<String>>,
    body_contains: Option<Spanned<String>>,
}

/// The entries of a TOML request set, or the line of the first problem and what it is.
pub fn parse(text: &str) -> Result<Vec<RawEntry>, (usize, String)> {
    let line = |span: std::ops::Range<usize>| line_of(text, span.start);
    let file: File = toml::from_str(text).map_err(|e| {
        let at = e.span().map_or(1, &line);
        (at, e.message().trim_end_matches('.').replace('\n', " "))
    })?;
    let mut out = Vec::with_capacity(file.request.len());
    for t in file.request {
        let at = line(t.span());
        let t = t.into_inner();
        let url_line = line(t.url.span());
        let method = t.method.unwrap_or_default();
        let mut e = RawEntry::new(url_line.min(at).max(at), &method, t.url.get_ref());
        e.line = url_line;
        e.name = t.name;
        for h in &t.headers {
            let hat = line(h.span());
            match h.get_ref().split_once(':') {
                Some((n, v)) => e.headers.push((n.trim().into(), v.trim().into(), hat)),
                None => {
                    return Err((
                        hat,
                        format!(
                            "'{}' is not a header: write it as \"Name: value\"",
                            h.get_ref()
                        ),
                    ))
                }
            }
        }
        if let Some(b) = &t.body {
            let text = b.get_ref();
            e.body = match text.strip_prefix('@') {
                Some(rest) if rest.starts_with('@') => Body::Inline(rest.as_bytes().to_vec()),
                Some(path) => Body::File(path.into(), line(b.span())),
                None => Body::Inline(text.as_bytes().to_vec()),
            };
        }
        if let Some(w) = &t.weight {
            e.weight = u32::try_from(*w.get_ref()).map_err(|_| {
                (
                    line(w.span()),
                    format!(
                        "the weight {} is not a whole number from 0 to {}",
                        w.get_ref(),
                        u32::MAX
                    ),
                )
            })?;
        }
        e.status = t.status.map(|s| (s.get_ref().clone(), line(s.span())));
        e.body_contains = t
            .body_contains
            .map(|s| (s.get_ref().clone(), line(s.span())));
        out.push(e);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_entries_with_their_lines() {
        let text =
            "[[request]]\nurl = \"http://a/x\"\nweight = 2\n\n[[request]]\nmethod = \"POST\"\n\
            url = \"http://a/y\"\nheaders = [\"X-A: 1\"]\nbody = \"@@hi\"\nstatus = \"200\"\n\
            body_contains = \"ok\"\n[[request]]\nurl = \"http://a/z\"\nbody = \"@z.json\"\n";
        let e = parse(text).unwrap();
        assert_eq!(e.len(), 3);
        assert_eq!((e[0].line, e[0].weight, e[0].method.as_str()), (2, 2, ""));
        assert_eq!((e[1].line, e[1].method.as_str()), (7, "POST"));
        assert_eq!(e[1].headers, [("X-A".into(), "1".into(), 8)]);
        assert_eq!(e[1].body, Body::Inline(b"@hi".to_vec()));
        assert_eq!(e[1].status, Some(("200".into(), 10)));
        assert_eq!(e[1].body_contains, Some(("ok".into(), 11)));
        assert_eq!(e[2].body, Body::File("z.json".into(), 14));
    }

    #[test]
    fn problems_name_their_line() {
        let bad = |t: &str| parse(t).unwrap_err();
        assert_eq!(bad("[[request]]\nurl = \"http://a/\"\nweigth = 2\n").0, 3);
        assert_eq!(bad("[[request]]\nurl = \"http://a/\"\nweight = -1\n").0, 3);
        assert_eq!(
            bad("[[request]]\nurl = \"http://a/\"\nheaders = [\"X\"]\n").0,
            3
        );
        assert_eq!(bad("[[request]]\nmethod = \"GET\"\n").0, 1);
    }
}
