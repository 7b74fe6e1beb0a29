//! No module of the engine uses a module that uses it back: the children of every module (the
//! crate's top-level modules, the submodules of `exec`, of `workload`, …) form no cycle
//! (docs/architecture.md, "Layers"). The graph is read from the sources: every `crate::…`,
//! `super::…` and `self::…` path, in code and tests alike.

mod graph;
mod paths;

use graph::{Graph, Source};

fn engine_sources() -> Vec<Source> {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    let mut dirs = vec![src.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("src/ is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let name = path.strip_prefix(&src).expect("under src/").to_string_lossy().replace('\\', "/");
                files.push((name, std::fs::read_to_string(&path).expect("a readable source file")));
            }
        }
    }
    files
}

fn cycles_in(files: &[Source], parent: &[String]) -> Vec<String> {
    let parent: Vec<&str> = parent.iter().map(String::as_str).collect();
    Graph::of(files, &parent).cycles().iter().map(ToString::to_string).collect()
}

#[test]
fn the_engine_has_no_module_cycle() {
    let files = engine_sources();
    assert!(files.len() > 50, "found only {} source files", files.len());
    let parents = graph::parents(&files);
    assert!(parents.contains(&vec!["exec".to_string()]), "{parents:?}");
    let cycles: Vec<String> = parents.iter().flat_map(|p| cycles_in(&files, p)).collect();
    assert!(cycles.is_empty(), "modules that use each other (move the shared item down):\n{}", cycles.join("\n"));
    // The graph is really read: the executor uses the drivers and the workloads.
    let top = Graph::of(&files, &[]);
    assert!(top.edges["exec"].contains_key("driver") && top.edges["exec"].contains_key("workload"));
}

fn src(files: &[(&str, &str)]) -> Vec<Source> {
    files.iter().map(|(f, t)| ((*f).to_string(), (*t).to_string())).collect()
}

#[test]
fn a_deliberate_cycle_is_named_with_its_places() {
    let files = src(&[
        ("lib.rs", "pub mod a;\npub mod b;\npub mod c;\n"),
        ("a.rs", "use crate::b::Thing;\n"),
        ("b/mod.rs", "mod inner;\n"),
        ("b/inner.rs", "\n\nfn f() { crate::c::g() }\n"),
        ("c.rs", "use crate::{b, a::{self, Other}};\n"),
    ]);
    let cycles = Graph::of(&files, &[]).cycles();
    assert_eq!(cycles.len(), 1);
    let text = cycles[0].to_string();
    assert!(text.starts_with("a cycle in the crate: a → b → c → a"), "{text}");
    assert!(text.contains("b uses c at src/b/inner.rs:3"), "{text}");
    assert!(text.contains("c uses a at src/c.rs:1"), "{text}");
}

#[test]
fn cycles_between_submodules_follow_super_and_reexports() {
    let files = src(&[
        ("exec/mod.rs", "mod run;\nmod spec;\nmod start;\npub use spec::{LoadShape as Shape, Other};\n"),
        ("exec/run.rs", "use super::start::wait;\n"),
        ("exec/start.rs", "fn f() { super::run::epoch_s() }\n"),
        ("exec/spec.rs", "use super::run;\n"),
        ("exec/steps.rs", "#[cfg(test)]\nmod tests {\n    use crate::exec::Shape;\n    use super::*;\n}\n"),
    ]);
    let graph = Graph::of(&files, &["exec"]);
    let cycles = graph.cycles();
    let names: Vec<Vec<&str>> = cycles.iter().map(graph::Cycle::nodes).collect();
    assert_eq!(names, [["run", "start", "run"]]);
    // A test module's `use super::*` is its own module; a re-exported name is its child's.
    assert_eq!(graph.edges["steps"].keys().collect::<Vec<_>>(), ["spec"]);
    // Seen from the crate, all of it is one module.
    assert!(Graph::of(&files, &[]).cycles().is_empty());
}

#[test]
fn comments_strings_and_relative_paths_are_not_uses() {
    let files = src(&[
        ("a.rs", "// crate::b::x\n/* crate::b /* nested */ crate::b */\nconst S: &str = \"crate::b::y\";\nconst R: &str = r#\"crate::b\"#;\nfn f<'a>(c: char) -> bool { c == '\"' }\nuse b::x;\n"),
        ("b.rs", "use crate::a::f;\n"),
        ("c/mod.rs", "#[path = \"c_tests.rs\"]\nmod tests;\n"),
        ("c/c_tests.rs", "use super::super::b;\n"),
    ]);
    let graph = Graph::of(&files, &[]);
    assert!(graph.cycles().is_empty(), "{}", graph.cycles()[0]);
    assert_eq!(graph.edges["b"].keys().collect::<Vec<_>>(), ["a"]);
    // `c_tests.rs` is `c::tests` (its #[path]), so super::super is the crate.
    assert_eq!(graph.edges["c"].keys().collect::<Vec<_>>(), ["b"]);
    assert!(!graph.edges.contains_key("a"));
}
