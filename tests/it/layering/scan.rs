//! Which files of the crate each source file imports, read from the text (no parser,
//! no dependency): every `use` tree that starts with `crate::`, `super::`, `self::`
//! or a child module's name (re-exports too: a `pub use child::X` in a `mod.rs`
//! imports the child), and every path in code that starts the same way. A path is
//! resolved to the file of the longest module it names (`crate::stats::merge::Part`
//! -> src/stats/merge/mod.rs); an inline module (`mod tests { .. }`) is its file's.
//! A `mod x;` declaration is no import. Comments and string literals are skipped.

use std::collections::{BTreeMap, BTreeSet};

/// One import of a file by another, with where it was found.
#[derive(Debug)]
pub struct Import {
    pub from: String,
    pub to: String,
    /// `file:line path`, for the failure message.
    pub at: String,
}

type Module = Vec<String>;

/// The imports among `files` (paths under the crate root as `src/..`, with their text).
/// `src/main.rs` is another crate (the binary) and is left out.
pub fn imports(files: &[(String, String)]) -> Vec<Import> {
    let files: Vec<(&str, Vec<(String, usize)>)> = files
        .iter()
        .filter(|(p, _)| p != "src/main.rs")
        .map(|(p, text)| (p.as_str(), tokens(&strip(text))))
        .collect();
    let mut owner: BTreeMap<Module, &str> = BTreeMap::new();
    let mut children: BTreeMap<Module, BTreeSet<String>> = BTreeMap::new();
    for (path, toks) in &files {
        let base = module_of(path);
        owner.insert(base.clone(), path);
        declared(&base, toks, path, &mut owner, &mut children);
    }
    let mut out = Vec::new();
    for (path, toks) in &files {
        for (segs, line) in paths(&module_of(path), toks, &children) {
            let Some(to) = (0..=segs.len()).rev().find_map(|k| owner.get(&segs[..k])) else {
                continue;
            };
            if to != path {
                out.push(Import {
                    from: path.to_string(),
                    to: to.to_string(),
                    at: format!("{path}:{line} {}", segs.join("::")),
                });
            }
        }
    }
    out
}

/// src/lib.rs -> [], src/a.rs and src/a/mod.rs -> [a], src/a/b.rs -> [a, b].
fn module_of(path: &str) -> Module {
    let rel = path.trim_start_matches("src/").trim_end_matches(".rs");
    let mut m: Module = rel.split('/').map(String::from).collect();
    if m == ["lib"] || m.last().is_some_and(|l| l == "mod") {
        m.pop();
    }
    m
}

fn is_ident(t: &str) -> bool {
    t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
}

/// The module each open brace is in: `base` plus the inline modules around it.
fn inner(base: &Module, stack: &[Option<String>]) -> Module {
    let mut m = base.clone();
    m.extend(stack.iter().flatten().cloned());
    m
}

/// Records every `mod x;` / `mod x { .. }` of one file as a child of its module;
/// inline modules belong to the file.
fn declared<'a>(
    base: &Module,
    toks: &[(String, usize)],
    path: &'a str,
    owner: &mut BTreeMap<Module, &'a str>,
    children: &mut BTreeMap<Module, BTreeSet<String>>,
) {
    let mut stack: Vec<Option<String>> = Vec::new();
    for (k, (t, _)) in toks.iter().enumerate() {
        let next = |d: usize| toks.get(k + d).map_or("", |(s, _)| s.as_str());
        if t == "mod" && is_ident(next(1)) && matches!(next(2), ";" | "{") {
            let here = inner(base, &stack);
            children
                .entry(here.clone())
                .or_default()
                .insert(next(1).into());
            if next(2) == "{" {
                let mut m = here;
                m.push(next(1).into());
                owner.entry(m).or_insert(path);
            }
        }
        match t.as_str() {
            "{" => {
                let inline = k >= 2 && toks[k - 2].0 == "mod";
                stack.push(inline.then(|| toks[k - 1].0.clone()));
            }
            "}" => {
                stack.pop();
            }
            _ => {}
        }
    }
}

/// Every crate-relative path of one file, absolute, with its line.
fn paths(
    base: &Module,
    toks: &[(String, usize)],
    children: &BTreeMap<Module, BTreeSet<String>>,
) -> Vec<(Module, usize)> {
    let mut out = Vec::new();
    let mut stack: Vec<Option<String>> = Vec::new();
    let tok = |i: usize| toks.get(i).map_or("", |(s, _)| s.as_str());
    let mut i = 0;
    while i < toks.len() {
        let (t, line) = (tok(i), toks[i].1);
        let here = inner(base, &stack);
        let prev = if i > 0 { tok(i - 1) } else { ";" };
        if t == "{" {
            let inline = i >= 2 && tok(i - 2) == "mod";
            stack.push(inline.then(|| tok(i - 1).to_string()));
            i += 1;
        } else if t == "}" {
            stack.pop();
            i += 1;
        } else if t == "use" && matches!(prev, ";" | "{" | "}" | ")" | "]" | "pub") {
            let mut trees = Vec::new();
            i = use_tree(toks, i + 1, Vec::new(), &mut trees);
            while i < toks.len() && tok(i) != ";" {
                i += 1;
            }
            for segs in trees {
                out.extend(absolute(&segs, &here, children).map(|a| (a, line)));
            }
        } else if is_ident(t) && tok(i + 1) == "::" && prev != "::" {
            let mut segs = vec![t.to_string()];
            i += 1;
            while tok(i) == "::" && is_ident(tok(i + 1)) {
                segs.push(tok(i + 1).to_string());
                i += 2;
            }
            out.extend(absolute(&segs, &here, children).map(|a| (a, line)));
        } else {
            i += 1;
        }
    }
    out
}

/// Parses one use tree from `i` into its paths (`a::{b, c::d}` -> a::b, a::c::d);
/// returns where it ended.
fn use_tree(
    toks: &[(String, usize)],
    mut i: usize,
    mut segs: Vec<String>,
    out: &mut Vec<Vec<String>>,
) -> usize {
    let tok = |i: usize| toks.get(i).map_or(";", |(s, _)| s.as_str());
    loop {
        match tok(i) {
            "{" => {
                i += 1;
                while !matches!(tok(i), "}" | ";") {
                    i = use_tree(toks, i, segs.clone(), out);
                    if tok(i) == "," {
                        i += 1;
                    }
                }
                return i + 1;
            }
            "*" => {
                out.push(segs);
                return i + 1;
            }
            "::" => i += 1,
            t if is_ident(t) => {
                segs.push(t.to_string());
                i += 1;
                if tok(i) == "as" {
                    i += 2;
                }
                if tok(i) != "::" {
                    if segs.last().is_some_and(|s| s == "self") {
                        segs.pop();
                    }
                    out.push(segs);
                    return i;
                }
            }
            _ => return i,
        }
    }
}

/// The absolute module path `segs` names from module `here`, when it is the crate's
/// (not std's, nor another crate's, nor a type's associated item).
fn absolute(
    segs: &[String],
    here: &Module,
    children: &BTreeMap<Module, BTreeSet<String>>,
) -> Option<Module> {
    let first = segs.first()?.as_str();
    let mut at: Module = match first {
        "crate" => Vec::new(),
        "super" | "self" => here.clone(),
        _ if children.get(here).is_some_and(|c| c.contains(first)) => here.clone(),
        _ => return None,
    };
    let mut rest = if first == "crate" { &segs[1..] } else { segs };
    while let Some(s) = rest.first().filter(|s| *s == "super" || *s == "self") {
        if s == "super" {
            at.pop();
        }
        rest = &rest[1..];
    }
    at.extend(rest.iter().cloned());
    Some(at)
}

/// The text with comments, string and char literals blanked (newlines kept).
fn strip(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    let word = |i: usize| i > 0 && (at(i - 1).is_alphanumeric() || at(i - 1) == '_');
    let mut i = 0;
    while i < c.len() {
        let start = i;
        if at(i) == '/' && at(i + 1) == '/' {
            while i < c.len() && at(i) != '\n' {
                i += 1;
            }
        } else if at(i) == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            loop {
                if at(i) == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if at(i) == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else if i >= c.len() {
                    break;
                } else {
                    i += 1;
                }
            }
        } else if !word(i) && (at(i) == 'r' || (at(i) == 'b' && at(i + 1) == 'r')) && {
            let mut j = i + if at(i) == 'b' { 2 } else { 1 };
            while at(j) == '#' {
                j += 1;
            }
            at(j) == '"'
        } {
            i += if at(i) == 'b' { 2 } else { 1 };
            let mut hashes = 0;
            while at(i) == '#' {
                hashes += 1;
                i += 1;
            }
            i += 1;
            while i < c.len() && !(at(i) == '"' && (1..=hashes).all(|h| at(i + h) == '#')) {
                i += 1;
            }
            i += 1 + hashes;
        } else if at(i) == '"' || (at(i) == 'b' && at(i + 1) == '"' && !word(i)) {
            i += if at(i) == 'b' { 2 } else { 1 };
            while i < c.len() && at(i) != '"' {
                i += if at(i) == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else if at(i) == '\'' && (at(i + 1) == '\\' || at(i + 2) == '\'') {
            // A char literal ('x', '\n', '\'', '\u{..}'); a lifetime ('a) has no
            // closing quote.
            i += if at(i + 1) == '\\' { 3 } else { 2 };
            while i < c.len() && at(i) != '\'' {
                i += 1;
            }
            i += 1;
        } else {
            out.push(at(i));
            i += 1;
            continue;
        }
        let end = i.min(c.len());
        out.extend(
            c[start..end]
                .iter()
                .map(|&ch| if ch == '\n' { '\n' } else { ' ' }),
        );
    }
    out
}

/// Identifiers, `::` and single punctuation characters, each with its line.
fn tokens(text: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let c: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < c.len() {
            if c[i].is_alphanumeric() || c[i] == '_' {
                let s = i;
                while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                    i += 1;
                }
                out.push((c[s..i].iter().collect(), n + 1));
            } else if c[i] == ':' && c.get(i + 1) == Some(&':') {
                out.push(("::".into(), n + 1));
                i += 2;
            } else {
                if !c[i].is_whitespace() {
                    out.push((c[i].to_string(), n + 1));
                }
                i += 1;
            }
        }
    }
    out
}
