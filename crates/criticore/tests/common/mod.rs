//! Helpers shared by the integration tests.

/// A Perfetto trace's runnable slices (copies, runnables, bodies) in order,
/// as (name, start µs, duration µs).
pub fn runnable_slices(trace_json: &str) -> Vec<(String, f64, f64)> {
    let doc: serde_json::Value = serde_json::from_str(trace_json).unwrap();
    doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "runnable")
        .map(|e| (e["name"].as_str().unwrap().to_string(), e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap()))
        .collect()
}
