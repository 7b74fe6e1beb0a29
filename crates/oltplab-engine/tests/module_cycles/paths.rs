//! The module paths a Rust source file names: every `crate::…`, `super::…` and `self::…` path
//! (use trees expanded), and the re-exports (`pub use child::Item`) of a parent module, each
//! with the module it is written in and its line. Comments, strings and character literals are
//! skipped, so a path in a doc comment or a message is not a use.

/// A path as written, at the module it is written in.
#[derive(Debug, Clone)]
pub struct Use {
    /// The module the path is written in (file module and inline `mod x { }` blocks).
    pub at: Vec<String>,
    /// The path resolved to an absolute module path (`crate`, `super`, `self` removed).
    pub path: Vec<String>,
    pub line: usize,
}

/// `pub use child::Item [as Name]` in a module's own file: `Name` is `child`'s.
#[derive(Debug, Clone)]
pub struct Reexport {
    pub module: Vec<String>,
    pub name: String,
    pub child: String,
}

/// A child module declared with `#[path = "file.rs"] mod name;` (a file not named after it).
#[derive(Debug, Clone)]
pub struct PathAttr {
    pub module: Vec<String>,
    pub file: String,
}

#[derive(Debug, Default)]
pub struct Scan {
    pub uses: Vec<Use>,
    pub reexports: Vec<Reexport>,
    pub path_attrs: Vec<PathAttr>,
    /// Every module seen: the file's and its inline ones.
    pub modules: Vec<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Str(String),
    PathSep,
    Open,
    Close,
    Other(char),
}

/// Scans one file whose module path is `module`.
pub fn scan(module: &[String], text: &str) -> Scan {
    let toks = tokens(text);
    let mut out = Scan { modules: vec![module.to_vec()], ..Scan::default() };
    // Inline modules: (name, brace depth inside them).
    let mut inline: Vec<usize> = Vec::new();
    let mut at: Vec<String> = module.to_vec();
    let mut depth = 0;
    let mut i = 0;
    while i < toks.len() {
        let (tok, line) = (&toks[i].0, toks[i].1);
        match tok {
            Tok::Open => depth += 1,
            Tok::Close => {
                depth -= 1;
                if inline.last() == Some(&(depth + 1)) {
                    inline.pop();
                    at.pop();
                }
            }
            Tok::Ident(kw) if kw == "mod" => {
                if let (Some(Tok::Ident(name)), Some(next)) = (tok_at(&toks, i + 1), tok_at(&toks, i + 2)) {
                    if *next == Tok::Open {
                        at.push(name.clone());
                        out.modules.push(at.clone());
                        inline.push(depth + 1);
                        depth += 1;
                        i += 3;
                        continue;
                    }
                    if let Some(file) = path_attr_before(&toks, i) {
                        out.path_attrs.push(PathAttr { module: [&at[..], std::slice::from_ref(name)].concat(), file });
                    }
                }
            }
            Tok::Ident(kw) if kw == "use" && at == module && is_pub_before(&toks, i) => {
                let mut trees = Vec::new();
                i = use_tree(&toks, i + 1, Vec::new(), &mut trees);
                for (segments, alias) in trees {
                    if let Some(path) = resolve(&at, &segments) {
                        out.uses.push(Use { at: at.clone(), path, line });
                    } else if let [child, .., last] = &segments[..] {
                        let name = alias.unwrap_or_else(|| last.clone());
                        out.reexports.push(Reexport { module: at.clone(), name, child: child.clone() });
                    }
                }
                continue;
            }
            Tok::Ident(root)
                if matches!(root.as_str(), "crate" | "super" | "self")
                    && tok_at(&toks, i + 1) == Some(&Tok::PathSep) =>
            {
                let mut trees = Vec::new();
                i = use_tree(&toks, i, Vec::new(), &mut trees);
                for (segments, _) in trees {
                    if let Some(path) = resolve(&at, &segments) {
                        out.uses.push(Use { at: at.clone(), path, line });
                    }
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

fn tok_at(toks: &[(Tok, usize)], i: usize) -> Option<&Tok> {
    toks.get(i).map(|(t, _)| t)
}

/// `pub use` or `pub(crate) use`: the tokens before `use` at `i`.
fn is_pub_before(toks: &[(Tok, usize)], i: usize) -> bool {
    let before = |n: usize| i.checked_sub(n).and_then(|j| tok_at(toks, j));
    before(1) == Some(&Tok::Ident("pub".into()))
        || (before(1) == Some(&Tok::Other(')')) && before(4) == Some(&Tok::Ident("pub".into())))
}

/// `#[path = "file.rs"]` right before `mod` at `i`.
fn path_attr_before(toks: &[(Tok, usize)], i: usize) -> Option<String> {
    let window: Vec<&Tok> = (i.checked_sub(6)?..i).filter_map(|j| tok_at(toks, j)).collect();
    match window[..] {
        [Tok::Other('#'), Tok::Other('['), Tok::Ident(p), Tok::Other('='), Tok::Str(file), Tok::Other(']')]
            if p == "path" =>
        {
            Some(file.clone())
        }
        _ => None,
    }
}

/// Reads a use tree (or an expression's path) from `i`; pushes each full path with its alias
/// (`as Name`); returns the index after it.
fn use_tree(
    toks: &[(Tok, usize)],
    mut i: usize,
    mut prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>)>,
) -> usize {
    loop {
        match tok_at(toks, i) {
            Some(Tok::Ident(name)) => {
                prefix.push(name.clone());
                i += 1;
                if tok_at(toks, i) == Some(&Tok::PathSep) {
                    i += 1;
                    continue;
                }
                let alias = match (tok_at(toks, i), tok_at(toks, i + 1)) {
                    (Some(Tok::Ident(kw)), Some(Tok::Ident(alias))) if kw == "as" => {
                        i += 2;
                        Some(alias.clone())
                    }
                    _ => None,
                };
                // `{self, …}` names the module itself.
                if prefix.last().is_some_and(|s| s == "self") && prefix.len() > 1 {
                    prefix.pop();
                }
                out.push((prefix, alias));
                return i;
            }
            Some(Tok::Open) => {
                i += 1;
                while let Some(t) = tok_at(toks, i) {
                    match t {
                        Tok::Close => return i + 1,
                        Tok::Other(',') => i += 1,
                        _ => i = use_tree(toks, i, prefix.clone(), out),
                    }
                }
                return i;
            }
            // A glob, a generic argument, a call: the path ends here.
            _ => {
                if !prefix.is_empty() {
                    out.push((prefix, None));
                }
                return i;
            }
        }
    }
}

/// The absolute module path `segments` names from module `at`; None for a relative path.
fn resolve(at: &[String], segments: &[String]) -> Option<Vec<String>> {
    let mut path: Vec<String>;
    let mut rest = segments;
    match segments.first().map(String::as_str) {
        Some("crate") => {
            path = Vec::new();
            rest = &segments[1..];
        }
        Some("self") => {
            path = at.to_vec();
            rest = &segments[1..];
        }
        Some("super") => {
            path = at.to_vec();
            while rest.first().is_some_and(|s| s == "super") {
                path.pop()?;
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    path.extend(rest.iter().cloned());
    Some(path)
}

/// Identifiers, `::`, braces and punctuation, with their lines; comments, strings (their text
/// kept only as a `Str` token), characters and lifetimes skipped.
fn tokens(text: &str) -> Vec<(Tok, usize)> {
    let cs: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    let at = |j: usize| cs.get(j).copied().unwrap_or('\0');
    while i < cs.len() {
        let c = cs[i];
        if c.is_whitespace() {
            line += usize::from(c == '\n');
            i += 1;
        } else if c == '/' && at(i + 1) == '/' {
            while i < cs.len() && cs[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut nest = 0;
            loop {
                if i >= cs.len() {
                    break;
                }
                if cs[i] == '/' && at(i + 1) == '*' {
                    nest += 1;
                    i += 2;
                } else if cs[i] == '*' && at(i + 1) == '/' {
                    nest -= 1;
                    i += 2;
                    if nest == 0 {
                        break;
                    }
                } else {
                    line += usize::from(cs[i] == '\n');
                    i += 1;
                }
            }
        } else if c == '"' {
            let start = i + 1;
            i += 1;
            while i < cs.len() && cs[i] != '"' {
                if cs[i] == '\\' {
                    i += 1;
                }
                line += usize::from(at(i) == '\n');
                i += 1;
            }
            out.push((Tok::Str(cs[start..i.min(cs.len())].iter().collect()), line));
            i += 1;
        } else if c == '\'' {
            // A character literal ('x', '\n', '\u{1F600}'), else a lifetime or a label.
            if at(i + 1) == '\\' {
                i += 2;
                while i < cs.len() && cs[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                i += 1;
            }
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < cs.len() && (cs[i].is_alphanumeric() || cs[i] == '_') {
                i += 1;
            }
            let word: String = cs[start..i].iter().collect();
            // Raw strings (r"…", r#"…"#, br"…") and byte literals (b"…", b'…'): skip to their end.
            let hashes = cs[i.min(cs.len())..].iter().take_while(|&&h| h == '#').count();
            if matches!(word.as_str(), "r" | "br") && at(i + hashes) == '"' {
                i += hashes + 1;
                let end: Vec<char> = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
                while i < cs.len() && !cs[i..].starts_with(&end) {
                    line += usize::from(cs[i] == '\n');
                    i += 1;
                }
                i += end.len();
            } else if word == "b" && matches!(at(i), '"' | '\'') {
                // Read as the plain literal that follows.
            } else {
                out.push((Tok::Ident(word), line));
            }
        } else if c == ':' && at(i + 1) == ':' {
            out.push((Tok::PathSep, line));
            i += 2;
        } else {
            out.push((
                match c {
                    '{' => Tok::Open,
                    '}' => Tok::Close,
                    _ => Tok::Other(c),
                },
                line,
            ));
            i += 1;
        }
    }
    out
}
