//! vegeta's targets file, its `http` format, read as vegeta reads it: a target is a
//! line `METHOD URL` (the method in capitals), then header lines `Name: value`, then
//! optionally `@path` (the body, read from that file: it ends the target), then a blank
//! line or the next target's line. Blank lines between targets and lines starting with
//! `#` are skipped. vegeta has no weights: every target weighs 1.

use super::raw_entry::{Body, RawEntry};

/// Whether a trimmed line starts a target: an upper-case word, then white space
/// (vegeta's `^[A-Z]+\s`).
fn starts_target(line: &str) -> bool {
    let word = line.bytes().take_while(u8::is_ascii_uppercase).count();
    word > 0 && line[word..].starts_with([' ', '\t'])
}

/// The targets of `text`, each with the line it starts on; or the number of the first
/// bad line and what is wrong with it.
pub fn parse(text: &str) -> Result<Vec<RawEntry>, (usize, String)> {
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let (at, line) = lines[i];
        i += 1;
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((method, url)) = line.split_once([' ', '\t']) else {
            return Err((
                at,
                format!("'{line}' is not a target: write it as METHOD URL"),
            ));
        };
        if !starts_target(line) {
            return Err((
                at,
                format!("'{method}' is not a method: write it in capitals, as GET or POST"),
            ));
        }
        let mut entry = RawEntry::new(at, method, url.trim());
        while i < lines.len() {
            let (hat, h) = lines[i];
            if h.is_empty() || starts_target(h) {
                break;
            }
            i += 1;
            if h.starts_with('#') {
                continue;
            }
            if let Some(path) = h.strip_prefix('@') {
                entry.body = Body::File(path.into(), hat);
                break;
            }
            match h.split_once(':') {
                Some((n, v)) if !n.trim().is_empty() && !v.trim().is_empty() => {
                    entry
                        .headers
                        .push((n.trim().to_string(), v.trim().to_string(), hat));
                }
                _ => {
                    return Err((
                        hat,
                        format!("'{h}' is not a header: write it as \"Name: value\""),
                    ))
                }
            }
        }
        out.push(entry);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_vegetas_examples() {
        let text = "# get a dragon ball\nGET http://goku:9090/path/to/dragon?item=balls\n\
            X-Account-ID: 8675309\n\n\nDELETE http://goku:9090/path/to/remove\n\
            Confirmation-Token: 90215\n# a comment between headers\nAuthorization: Token DEADBEEF\n\
            POST http://goku:9090/things\nX-Account-ID: 99\n@/path/to/newthing.json\n\
            HEAD http://goku:9090/path/to/success\n";
        let t = parse(text).unwrap();
        assert_eq!(t.len(), 4);
        assert_eq!(
            (t[0].line, t[0].method.as_str(), t[0].url.as_str()),
            (2, "GET", "http://goku:9090/path/to/dragon?item=balls")
        );
        assert_eq!(t[0].headers, [("X-Account-ID".into(), "8675309".into(), 3)]);
        assert_eq!(t[1].line, 6);
        let names: Vec<&str> = t[1].headers.iter().map(|h| h.0.as_str()).collect();
        assert_eq!(names, ["Confirmation-Token", "Authorization"]);
        assert_eq!(t[2].body, Body::File("/path/to/newthing.json".into(), 12));
        assert_eq!(t[2].weight, 1);
        assert_eq!((t[3].method.as_str(), t[3].headers.len()), ("HEAD", 0));
    }

    #[test]
    fn a_bad_line_is_named_by_its_number() {
        let err = |text: &str| parse(text).unwrap_err();
        assert_eq!(err("GET http://a/\n\nget http://a/b").0, 3);
        assert!(err("get http://a/").1.contains("capitals"));
        assert_eq!(
            err("GET http://a/\nX-A 1\n"),
            (
                2,
                "'X-A 1' is not a header: write it as \"Name: value\"".into()
            )
        );
        assert_eq!(err("GET http://a/\nX-A:\n").0, 2);
        assert_eq!(err("\n\nGET\n").0, 3);
    }
}
