//! The graph of uses between the children of one module (the crate's top-level modules, or
//! the submodules of `exec`), and its cycles.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;

use crate::paths::{scan, Scan};

/// A source file: its path under `src/` (`exec/run.rs`) and its text.
pub type Source = (String, String);

/// The module path of a file under `src/`: `lib.rs` is the crate, `a/mod.rs` and `a.rs` are `a`.
fn module_of(file: &str) -> Vec<String> {
    let stem = file.strip_suffix(".rs").unwrap_or(file);
    let mut parts: Vec<String> = stem.split('/').map(str::to_string).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    parts
}

/// Every file scanned, with `#[path]` modules placed where they are declared.
fn scan_all(files: &[Source]) -> Vec<(String, Scan)> {
    let first: Vec<Scan> = files.iter().map(|(f, text)| scan(&module_of(f), text)).collect();
    // `#[path = "x.rs"] mod m;` in `dir/f.rs`: the file `dir/x.rs` is module `…::f::m`.
    let mut placed: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for ((file, _), s) in files.iter().zip(&first) {
        let dir = file.rfind('/').map_or("", |i| &file[..=i]);
        for a in &s.path_attrs {
            placed.insert(format!("{dir}{}", a.file), a.module.clone());
        }
    }
    files
        .iter()
        .zip(first)
        .map(|((file, text), s)| match placed.get(file) {
            Some(module) => (file.clone(), scan(module, text)),
            None => (file.clone(), s),
        })
        .collect()
}

/// Every module with child modules (the crate first): the parents whose children are checked.
pub fn parents(files: &[Source]) -> Vec<Vec<String>> {
    let modules: BTreeSet<Vec<String>> = scan_all(files).into_iter().flat_map(|(_, s)| s.modules).collect();
    modules
        .iter()
        .filter_map(|m| m.split_last().map(|(_, parent)| parent.to_vec()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// One use of a child by another: where it is written.
#[derive(Debug, Clone)]
pub struct Evidence {
    pub file: String,
    pub line: usize,
}

/// Which children of `parent` use which (the first place each use is written).
pub struct Graph {
    pub parent: Vec<String>,
    pub edges: BTreeMap<String, BTreeMap<String, Evidence>>,
}

impl Graph {
    pub fn of(files: &[Source], parent: &[&str]) -> Self {
        let parent: Vec<String> = parent.iter().map(|s| (*s).to_string()).collect();
        let scans = scan_all(files);
        let child_of =
            |m: &[String]| (m.len() > parent.len() && m.starts_with(&parent)).then(|| m[parent.len()].clone());
        let children: BTreeSet<String> =
            scans.iter().flat_map(|(_, s)| &s.modules).filter_map(|m| child_of(m)).collect();
        // Items the parent re-exports from a child (`pub use spec::LoadShape` in exec/mod.rs).
        let reexported: BTreeMap<&str, &str> = scans
            .iter()
            .flat_map(|(_, s)| &s.reexports)
            .filter(|r| r.module == parent && children.contains(&r.child))
            .map(|r| (r.name.as_str(), r.child.as_str()))
            .collect();
        let mut edges: BTreeMap<String, BTreeMap<String, Evidence>> = BTreeMap::new();
        for (file, s) in &scans {
            for u in &s.uses {
                let Some(from) = child_of(&u.at) else { continue };
                let Some(named) = child_of(&u.path) else { continue };
                let to = if children.contains(&named) {
                    named
                } else if let Some(child) = reexported.get(named.as_str()) {
                    (*child).to_string()
                } else {
                    continue; // an item of the parent itself
                };
                if from != to {
                    let evidence = Evidence { file: file.clone(), line: u.line };
                    edges.entry(from).or_default().entry(to).or_insert(evidence);
                }
            }
        }
        Self { parent, edges }
    }

    /// Shortest cycles until every child on a cycle is on one reported (each child that closes
    /// a loop is named, not only the first tangle found).
    pub fn cycles(&self) -> Vec<Cycle> {
        let mut found = Vec::new();
        let mut covered: BTreeSet<&str> = BTreeSet::new();
        for start in self.edges.keys() {
            if covered.contains(start.as_str()) {
                continue;
            }
            if let Some(nodes) = self.shortest_cycle(start) {
                let steps: Vec<_> =
                    nodes.windows(2).map(|w| (w[0].clone(), w[1].clone(), self.edges[&w[0]][&w[1]].clone())).collect();
                covered.extend(nodes.iter().filter_map(|n| self.edges.get_key_value(n)).map(|(k, _)| k.as_str()));
                found.push(Cycle { parent: self.parent.clone(), steps });
            }
        }
        found
    }

    fn uses(&self, node: &str) -> impl Iterator<Item = &String> {
        self.edges.get(node).into_iter().flat_map(BTreeMap::keys)
    }

    /// `start`, the children on a shortest way back, and `start` again.
    fn shortest_cycle(&self, start: &str) -> Option<Vec<String>> {
        let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
        let mut queue: VecDeque<&str> = VecDeque::from([start]);
        while let Some(node) = queue.pop_front() {
            for next in self.uses(node) {
                if next == start {
                    // Back along the way the search came: node, …, start.
                    let mut path = vec![node];
                    while let Some(&prev) = came_from.get(path[path.len() - 1]) {
                        path.push(prev);
                    }
                    path.reverse();
                    path.push(start);
                    return Some(path.into_iter().map(str::to_string).collect());
                }
                if !came_from.contains_key(next.as_str()) {
                    came_from.insert(next, node);
                    queue.push_back(next);
                }
            }
        }
        None
    }
}

/// Children of one module that use each other in a circle: `a → b → a`, each use with its place.
pub struct Cycle {
    pub parent: Vec<String>,
    pub steps: Vec<(String, String, Evidence)>,
}

impl Cycle {
    pub fn nodes(&self) -> Vec<&str> {
        let mut nodes: Vec<&str> = self.steps.iter().map(|(from, _, _)| from.as_str()).collect();
        nodes.extend(self.steps.last().map(|(_, to, _)| to.as_str()));
        nodes
    }
}

impl fmt::Display for Cycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let within = if self.parent.is_empty() { "the crate".to_string() } else { self.parent.join("::") };
        write!(f, "a cycle in {within}: {}", self.nodes().join(" → "))?;
        for (from, to, e) in &self.steps {
            write!(f, "\n    {from} uses {to} at src/{}:{}", e.file, e.line)?;
        }
        Ok(())
    }
}
