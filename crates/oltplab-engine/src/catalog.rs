//! The catalogue of workloads and options, as JSON for the CLI: option names,
//! defaults and help texts are defined once, here in the engine.

use serde::Serialize;

use crate::error::Result;
use crate::exec::LoadShape;
use crate::options::OptDef;
use crate::workload::Workload;

#[derive(Serialize)]
struct WorkloadEntry {
    name: &'static str,
    description: &'static str,
    options: Vec<OptDef>,
}

#[derive(Serialize)]
struct Catalog {
    general: Vec<OptDef>,
    workloads: Vec<WorkloadEntry>,
}

pub fn catalog_json() -> Result<String> {
    let workloads = Workload::names()
        .iter()
        .map(|&name| {
            Ok(WorkloadEntry {
                name,
                description: Workload::description(name).unwrap_or(""),
                options: Workload::defs(name)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(serde_json::to_string(&Catalog { general: LoadShape::defs(), workloads }).expect("the catalogue serialises"))
}
