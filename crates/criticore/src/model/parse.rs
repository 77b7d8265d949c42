//! Reading a task-system file (TOML or JSON, one schema; see docs/format.md).
//!
//! Both formats are first turned into one generic value tree, then walked by
//! hand so that every error names the exact field path (`task[3].pet.B`) and a
//! reason. Cross-task rules (harmonic periods, unique names, …) live in
//! [`super::validate`].

use super::units::{parse_bandwidth_bytes_per_s, parse_duration_ns, parse_size_bytes};
use super::scratchpad::{Label, LabelAccess, Memory};
use super::*;
use std::collections::HashMap;
use crate::error::{breaks_line, key, quote, quote_list, FieldError, FieldResult, InputError};
use serde_json::{Map, Value};

/// File format of a task system.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Toml,
    Json,
}

impl Format {
    /// `.json` files are JSON; everything else is read as TOML.
    pub fn from_path(path: &str) -> Format {
        if path.to_ascii_lowercase().ends_with(".json") {
            Format::Json
        } else {
            Format::Toml
        }
    }
}

/// Deepest nesting of tables and arrays a document may have (the schema needs
/// four; the limit keeps a hostile document from exhausting the stack).
pub const MAX_DEPTH: usize = 64;

/// Reads the parameter file that `platform.preset` names by path (the path
/// as written): its text, or why not. The engine opens no file; the caller
/// reads it (the binding: relative to the task file's directory).
pub type ReadParams<'a> = &'a dyn Fn(&str) -> Result<String, String>;

/// The reader of [`parse_task_system`] and [`parse_value`]: no files.
fn no_files(_: &str) -> Result<String, String> {
    Err("only the criticore library and CLI read parameter files (the engine opens no file)".into())
}

/// Parse and validate a task system. `file` is only used in error messages.
/// A `platform.preset` naming a parameter file is refused; see [`parse_task_system_with`].
pub fn parse_task_system(text: &str, format: Format, file: &str) -> Result<TaskSystem, InputError> {
    parse_task_system_with(text, format, file, &no_files)
}

/// [`parse_task_system`], reading a parameter file named by `platform.preset` with `read`.
pub fn parse_task_system_with(text: &str, format: Format, file: &str, read: ReadParams) -> Result<TaskSystem, InputError> {
    parse_value_with(&document(text, format, file)?, file, read)
}

/// Parse and validate a document already read into a value tree (what a
/// file holds, built in Python): the same walk and rules as a file.
pub fn parse_value(root: &Value, file: &str) -> Result<TaskSystem, InputError> {
    parse_value_with(root, file, &no_files)
}

/// [`parse_value`], reading a parameter file named by `platform.preset` with `read`.
pub fn parse_value_with(root: &Value, file: &str, read: ReadParams) -> Result<TaskSystem, InputError> {
    let system = walk_root(root, read).map_err(|e| e.in_file(file))?;
    validate::validate(&system).map_err(|e| e.in_file(file))?;
    Ok(system)
}

/// A file's text as its value tree (TOML tables become JSON objects, in order).
pub fn document(text: &str, format: Format, file: &str) -> Result<Value, InputError> {
    to_value(text, format).map_err(|e| e.in_file(file))
}

/// Parse raw bytes (checks UTF-8 first).
pub fn parse_task_system_bytes(bytes: &[u8], format: Format, file: &str) -> Result<TaskSystem, InputError> {
    parse_task_system_bytes_with(bytes, format, file, &no_files)
}

/// [`parse_task_system_bytes`], reading a parameter file named by `platform.preset` with `read`.
pub fn parse_task_system_bytes_with(bytes: &[u8], format: Format, file: &str, read: ReadParams) -> Result<TaskSystem, InputError> {
    parse_task_system_with(text_of(bytes, file)?, format, file, read)
}

/// A file's bytes as text, or an error naming the first byte that is not UTF-8.
pub fn text_of<'a>(bytes: &'a [u8], file: &str) -> Result<&'a str, InputError> {
    std::str::from_utf8(bytes).map_err(|e| {
        FieldError::new("(file)", format!("not valid UTF-8 text (byte {})", e.valid_up_to())).in_file(file)
    })
}

pub(crate) fn to_value(text: &str, format: Format) -> FieldResult<Value> {
    match format {
        Format::Json => {
            let value = serde_json::from_str::<Value>(text).map_err(|e| {
                let at = format!("line {} column {}", e.line(), e.column());
                // serde_json stops at 128 levels, before the walk below could.
                if e.to_string().starts_with("recursion limit exceeded") {
                    return FieldError::new(at, too_deep());
                }
                FieldError::new(at, format!("invalid JSON: {}", one_line(&e.to_string())))
            })?;
            check_depth(&value, "", 1)?;
            Ok(value)
        }
        Format::Toml => {
            let table = text.parse::<toml::Table>().map_err(|e| {
                let (line, column) = e
                    .span()
                    .map(|s| line_column(text, s.start))
                    .unwrap_or((1, 1));
                FieldError::new(
                    format!("line {line} column {column}"),
                    format!("invalid TOML: {}", one_line(e.message())),
                )
            })?;
            toml_to_json(toml::Value::Table(table), "", 1)
        }
    }
}

/// Error messages from parsers may span lines and quote the input; the CLI
/// prints one line, so breaks become "; " and the message is cut at 300 characters.
fn one_line(message: &str) -> String {
    let line = message.split('\n').map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("; ");
    let n = line.chars().count();
    if n <= 300 {
        return line;
    }
    format!("{}… ({n} characters)", line.chars().take(299).collect::<String>())
}

fn too_deep() -> String {
    format!("nested deeper than {MAX_DEPTH} levels of tables and arrays")
}

/// The path of a field `key` of the table at `path` (`task[0]` + `name`).
pub fn field_path(path: &str, key: &str) -> String {
    join(path, &self::key(key))
}

/// The refusal of a value nested deeper than [`MAX_DEPTH`] at `path`.
pub fn depth_error(path: &str) -> FieldError {
    FieldError::new(top(path), too_deep())
}

/// The refusal of a NaN or infinite number at `path` (no field takes one).
pub fn non_finite_error(path: &str, x: f64) -> FieldError {
    let name = if x.is_nan() { "nan" } else if x > 0.0 { "inf" } else { "-inf" };
    FieldError::new(top(path), format!("got {name}, not a finite number"))
}

fn top(path: &str) -> String {
    if path.is_empty() { "(top level)".to_string() } else { path.to_string() }
}

/// Refuse documents nested deeper than [`MAX_DEPTH`] (`depth` counts the
/// tables and arrays around and including `v`).
fn check_depth(v: &Value, path: &str, depth: usize) -> FieldResult<()> {
    let children: Box<dyn Iterator<Item = (String, &Value)>> = match v {
        Value::Array(a) => Box::new(a.iter().enumerate().map(|(i, x)| (format!("{path}[{i}]"), x))),
        Value::Object(m) => Box::new(m.iter().map(|(k, x)| (field_path(path, k), x))),
        _ => return Ok(()),
    };
    if depth > MAX_DEPTH {
        return Err(depth_error(path));
    }
    for (p, x) in children {
        check_depth(x, &p, depth + 1)?;
    }
    Ok(())
}

fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text.as_bytes()[..offset.min(text.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    // Columns count characters, not bytes.
    let column = String::from_utf8_lossy(&before[line_start..]).chars().count() + 1;
    (line, column)
}

/// A TOML value as a JSON one. JSON holds neither NaN, infinities nor
/// date-times, and no field takes one: they are refused here, at their path.
fn toml_to_json(value: toml::Value, path: &str, depth: usize) -> FieldResult<Value> {
    Ok(match value {
        toml::Value::String(s) => Value::String(s),
        toml::Value::Integer(i) => Value::from(i),
        toml::Value::Float(f) => serde_json::Number::from_f64(f).map(Value::Number).ok_or_else(|| non_finite_error(path, f))?,
        toml::Value::Boolean(b) => Value::Bool(b),
        toml::Value::Datetime(d) => {
            return Err(FieldError::new(top(path), format!("got the date-time {}, which no field takes (a name or unit value is a string: put it in quotes)", quote(&d.to_string()))))
        }
        toml::Value::Array(_) | toml::Value::Table(_) if depth > MAX_DEPTH => return Err(depth_error(path)),
        toml::Value::Array(a) => {
            Value::Array(a.into_iter().enumerate().map(|(i, v)| toml_to_json(v, &format!("{path}[{i}]"), depth + 1)).collect::<FieldResult<_>>()?)
        }
        toml::Value::Table(t) => Value::Object(
            t.into_iter()
                .map(|(k, v)| {
                    let p = field_path(path, &k);
                    toml_to_json(v, &p, depth + 1).map(|v| (k, v))
                })
                .collect::<FieldResult<_>>()?,
        ),
    })
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "a table",
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// A table being read, with its path for error messages.
struct Obj<'a> {
    map: &'a Map<String, Value>,
    path: String,
}

impl<'a> Obj<'a> {
    fn new(value: &'a Value, path: String) -> FieldResult<Self> {
        match value {
            Value::Object(map) => Ok(Obj { map, path }),
            other => {
                let field = if path.is_empty() { "(top level)".to_string() } else { path };
                Err(FieldError::new(field, format!("expected a table, got {}", type_name(other))))
            }
        }
    }

    fn field(&self, key: &str) -> String {
        field_path(&self.path, key)
    }

    fn only(&self, allowed: &[&str]) -> FieldResult<()> {
        for key in self.map.keys() {
            if !allowed.contains(&key.as_str()) {
                return Err(FieldError::new(
                    self.field(key),
                    format!("unknown field (expected one of: {})", allowed.join(", ")),
                ));
            }
        }
        Ok(())
    }

    fn opt(&self, key: &str) -> Option<&'a Value> {
        self.map.get(key)
    }

    fn req(&self, key: &str) -> FieldResult<&'a Value> {
        self.opt(key).ok_or_else(|| FieldError::new(self.field(key), "missing required field"))
    }

    fn table(&self, key: &str) -> FieldResult<Option<Obj<'a>>> {
        self.opt(key).map(|v| Obj::new(v, self.field(key))).transpose()
    }
}

fn as_str<'v>(v: &'v Value, field: &str) -> FieldResult<&'v str> {
    v.as_str().ok_or_else(|| FieldError::new(field, format!("expected a string, got {}", type_name(v))))
}

/// A name (of a task, server, device or group): a string on one line, since
/// names appear in tables, CSV rows and error messages.
fn as_name(v: &Value, field: &str) -> FieldResult<String> {
    let name = as_str(v, field)?;
    if name.chars().any(breaks_line) {
        return Err(FieldError::new(field, format!("a name must not hold control characters or line breaks, got {}", quote(name))));
    }
    Ok(name.to_string())
}

fn as_count(v: &Value, field: &str, min: u64, max: u64) -> FieldResult<u64> {
    let n = match v {
        Value::Number(n) => n.as_i64().ok_or_else(|| FieldError::new(field, format!("expected an integer, got {n}")))?,
        other => return Err(FieldError::new(field, format!("expected an integer, got {}", type_name(other)))),
    };
    if n < min as i64 || n as u64 > max {
        return Err(FieldError::new(field, format!("must be between {min} and {max}, got {n}")));
    }
    Ok(n as u64)
}

fn as_number(v: &Value, field: &str) -> FieldResult<f64> {
    v.as_f64().ok_or_else(|| FieldError::new(field, format!("expected a number, got {}", type_name(v))))
}

/// A duration string; zero allowed.
fn as_duration(v: &Value, field: &str) -> FieldResult<u64> {
    let text = as_str(v, field)
        .map_err(|_| FieldError::new(field, format!("expected a duration string with a unit (e.g. \"100ms\"), got {}", type_name(v))))?;
    parse_duration_ns(text).map_err(|r| FieldError::new(field, r))
}

fn as_duration_positive(v: &Value, field: &str) -> FieldResult<u64> {
    let text = as_str(v, field)
        .map_err(|_| FieldError::new(field, format!("expected a duration string with a unit (e.g. \"100ms\"), got {}", type_name(v))))?;
    let ns = parse_duration_ns(text).map_err(|r| FieldError::new(field, r))?;
    if ns == 0 {
        return Err(FieldError::new(field, format!("must be positive, got {}", quote(text))));
    }
    Ok(ns)
}

fn as_size(v: &Value, field: &str) -> FieldResult<u64> {
    let text = as_str(v, field)
        .map_err(|_| FieldError::new(field, format!("expected a size string with a unit (e.g. \"256KiB\"), got {}", type_name(v))))?;
    parse_size_bytes(text).map_err(|r| FieldError::new(field, r))
}

fn as_positive_size(v: &Value, field: &str) -> FieldResult<u64> {
    let bytes = as_size(v, field)?;
    if bytes == 0 {
        return Err(FieldError::new(field, "must be positive"));
    }
    Ok(bytes)
}

fn as_bandwidth(v: &Value, field: &str) -> FieldResult<u64> {
    let text = as_str(v, field)?;
    parse_bandwidth_bytes_per_s(text).map_err(|r| FieldError::new(field, r))
}

fn walk_root(root: &Value, read: ReadParams) -> FieldResult<TaskSystem> {
    let obj = Obj::new(root, String::new())?;
    obj.only(&["platform", "task", "server", "allocation", "regulation", "device", "chain", "label"])?;
    let platform = walk_platform(&Obj::new(obj.req("platform")?, "platform".into())?, read)?;
    let labels = walk_labels(&obj, &platform)?;
    // By name, for the runnables' reads and writes (WATERS 2017 has 10,000).
    let label_index: HashMap<&str, usize> = labels.iter().enumerate().map(|(k, l)| (l.name.as_str(), k)).collect();
    let servers = walk_array(&obj, "server", |item| walk_server(item, &platform))?;
    let mut tasks = walk_array(&obj, "task", |item| walk_task(item, &platform, &servers, &label_index))?;
    if let Some(i) = tasks.iter().position(|t| t.memory.is_some()).filter(|_| !platform.memories.is_empty()) {
        return Err(FieldError::new(format!("task[{i}].memory"), "a scratchpad platform ([[platform.memory]]) has no LLC or DRAM: give the task's data as labels its runnables read and write"));
    }
    let stand_in = super::background_stand_in_ns(&tasks, &servers);
    for t in tasks.iter_mut().filter(|t| t.is_background()) {
        (t.period_ns, t.deadline_ns, t.pet_ns) = (stand_in, stand_in, LevelPets([Some(stand_in); 4]));
    }
    walk_ipc_links(obj.opt("task"), &mut tasks, &platform)?;
    let allocation = obj
        .table("allocation")?
        .map(|a| walk_allocation(&a, &platform))
        .transpose()?;
    let regulation = obj.table("regulation")?.map(|r| walk_regulation(&r, &platform, &tasks)).transpose()?;
    let devices = walk_array(&obj, "device", |item| walk_device(item, &platform))?;
    if !platform.memories.is_empty() {
        let scratchpad = "a scratchpad platform ([[platform.memory]]) has no LLC, DRAM or bus to";
        if regulation.is_some() {
            return Err(FieldError::new("regulation", format!("{scratchpad} regulate: no memory regulator for crossbar ports yet")));
        }
        if !devices.is_empty() {
            return Err(FieldError::new("device[0]", format!("{scratchpad} stream DMA into")));
        }
    }
    let chains = walk_array(&obj, "chain", |item| walk_chain(item, &tasks))?;
    if let Some(k) = chains.iter().enumerate().position(|(k, c)| chains[..k].iter().any(|d| d.name == c.name)) {
        return Err(FieldError::new(format!("chain[{k}].name"), format!("duplicate chain name {}", quote(&chains[k].name))));
    }
    let mut system = TaskSystem { platform, tasks, servers, allocation, regulation, devices, chains, labels };
    super::scratchpad::derive_copies(&mut system).map_err(|(i, key)| {
        FieldError::new(format!("task[{i}].{key}"), "its copies come from the labels it reads and writes (implicit or LET communication on a scratchpad platform): leave copy_in and copy_out out, or give communication = \"explicit\"")
    })?;
    super::scratchpad::used_bytes(&system).map_err(|(i, m)| copies_overflow(&system, i, m))?;
    Ok(system)
}

/// Task `i`'s copies of labels take memory `m` past its size (`scratchpad::used_bytes`).
pub(crate) fn copies_overflow(system: &TaskSystem, i: usize, m: usize) -> FieldError {
    let memory = &system.platform.memories[m];
    FieldError::new(
        format!("task[{i}].communication"),
        format!(
            "task {}'s copies of the labels it reads and writes do not fit in {} ({} B, with the labels there and earlier tasks' copies): move labels out of it or give communication = \"explicit\"",
            quote(&system.tasks[i].name),
            quote(&memory.name),
            memory.size_bytes
        ),
    )
}

/// A `[[chain]]`: its name and its tasks by name, cause to effect (two or
/// more, none a background load: it has no jobs to read or write). A task
/// may come back: a later job of it reads what an earlier one wrote.
fn walk_chain(obj: &Obj, tasks: &[Task]) -> FieldResult<Chain> {
    obj.only(&["name", "tasks"])?;
    let name = as_name(obj.req("name")?, &obj.field("name"))?;
    let field = obj.field("tasks");
    let Some(items) = obj.req("tasks")?.as_array() else {
        return Err(FieldError::new(field, format!("expected an array of task names, got {}", type_name(obj.req("tasks")?))));
    };
    if items.len() < 2 {
        return Err(FieldError::new(field, "a chain needs at least two tasks (cause and effect)"));
    }
    let mut ids = Vec::with_capacity(items.len());
    for (k, v) in items.iter().enumerate() {
        let f = format!("{field}[{k}]");
        let n = as_str(v, &f)?;
        let Some(i) = tasks.iter().position(|t| t.name == n) else {
            return Err(FieldError::new(f, format!("no task named {}", quote(n))));
        };
        if tasks[i].is_background() {
            return Err(FieldError::new(f, format!("task {} is a background load: it reads and writes no data per job", quote(n))));
        }
        ids.push(i);
    }
    Ok(Chain { name, tasks: ids })
}

/// An optional array of tables (`[[key]]`), each read by `walk`.
fn walk_array<T>(obj: &Obj, key: &str, walk: impl Fn(&Obj) -> FieldResult<T>) -> FieldResult<Vec<T>> {
    match obj.opt(key) {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| walk(&Obj::new(item, format!("{}[{i}]", obj.field(key)))?))
            .collect(),
        Some(other) => Err(FieldError::new(
            obj.field(key),
            format!("expected an array of tables ([[{key}]]), got {}", type_name(other)),
        )),
    }
}

fn walk_platform(obj: &Obj, read: ReadParams) -> FieldResult<Platform> {
    obj.only(&["preset", "cores", "llc", "dram", "bus", "clock", "instructions_per_cycle", "memory"])?;
    let mut platform = match obj.opt("preset") {
        None => Platform::preset("imx6").expect("built-in preset"),
        Some(v) => {
            let field = obj.field("preset");
            let name = as_str(v, &field)?;
            if is_param_path(name) {
                let text = read(name).map_err(|why| FieldError::new(&field, format!("parameter file {}: {why}", quote(name))))?;
                parse_params(&text).map_err(|e| FieldError::new(&field, format!("parameter file {}: {}: {}", quote(name), e.field, e.reason)))?
            } else {
                builtin_preset(name, &field)?
            }
        }
    };
    platform.cores = as_count(obj.req("cores")?, &obj.field("cores"), 1, 1024)? as usize;
    platform_fields(obj, &mut platform)?;
    if let Some(v) = obj.opt("clock") {
        let field = obj.field("clock");
        let text = as_str(v, &field)?;
        let hz = units::parse_frequency_hz(text).map_err(|r| FieldError::new(&field, r))?;
        if hz == 0 {
            return Err(FieldError::new(field, "must be positive"));
        }
        platform.clock_hz = Some(hz);
    }
    if let Some(v) = obj.opt("instructions_per_cycle") {
        platform.instructions_per_cycle = Some(as_instructions_per_cycle(v, &obj.field("instructions_per_cycle"))?);
    }
    platform.memories = walk_array(obj, "memory", |m| walk_scratchpad(m, platform.cores))?;
    if let Some(k) = platform.memories.iter().enumerate().position(|(k, m)| platform.memories[..k].iter().any(|n| n.name == m.name)) {
        return Err(FieldError::new(format!("platform.memory[{k}].name"), format!("duplicate memory name {}", quote(&platform.memories[k].name))));
    }
    if !platform.memories.is_empty() && platform.clock_hz.is_none() {
        return Err(FieldError::new(obj.field("clock"), "missing: memories' latencies are in cycles of the cores' clock (e.g. clock = \"200MHz\")"));
    }
    Ok(platform)
}

/// `instructions_per_cycle`: a positive number, exactly (0.85 is 85/100:
/// the shortest decimal that reads back as the file's float), as a reduced
/// (numerator, denominator).
fn as_instructions_per_cycle(v: &Value, field: &str) -> FieldResult<(u64, u64)> {
    let text = match v {
        Value::Number(n) => n.to_string(),
        other => return Err(FieldError::new(field, format!("expected a positive number (e.g. 1 or 0.85), got {}", type_name(other)))),
    };
    let exact = crate::decimal::Exact::parse(&text).ok_or_else(|| FieldError::new(field, format!("expected a positive number, got {text}")))?;
    if !exact.is_positive() {
        return Err(FieldError::new(field, format!("must be positive, got {text}")));
    }
    exact.fraction_u64().ok_or_else(|| FieldError::new(field, format!("{text} has a numerator or denominator past 64 bits")))
}

/// A `[[platform.memory]]`: a scratchpad behind the crossbar (`model::scratchpad`).
fn walk_scratchpad(obj: &Obj, cores: usize) -> FieldResult<Memory> {
    obj.only(&["name", "core", "size", "latency_cycles", "width", "arbiter"])?;
    let name = as_name(obj.req("name")?, &obj.field("name"))?;
    if name.trim().is_empty() {
        return Err(FieldError::new(obj.field("name"), "must not be empty"));
    }
    let core = obj.opt("core").map(|v| as_count(v, &obj.field("core"), 0, cores as u64 - 1)).transpose()?.map(|c| c as usize);
    let size_bytes = as_positive_size(obj.req("size")?, &obj.field("size"))?;
    let field = obj.field("latency_cycles");
    let latency_cycles = match obj.req("latency_cycles")? {
        Value::Array(items) if items.len() == cores => items.iter().enumerate().map(|(c, v)| as_count(v, &format!("{field}[{c}]"), 1, 1 << 20)).collect::<FieldResult<Vec<u64>>>()?,
        Value::Array(items) => return Err(FieldError::new(field, format!("one latency per core: expected {cores}, got {}", items.len()))),
        v => vec![as_count(v, &field, 1, 1 << 20)?; cores],
    };
    let width_bytes = obj.opt("width").map(|v| as_positive_size(v, &obj.field("width"))).transpose()?.unwrap_or(4);
    let arbiter = match obj.opt("arbiter") {
        None => Arbiter::RoundRobin,
        Some(v) => walk_arbiter(v, &obj.field("arbiter"), &crate::model::scratchpad::PORT_ARBITERS)?,
    };
    Ok(Memory { name, core, size_bytes, latency_cycles, width_bytes, arbiter })
}

/// `[[label]]`s: each a name, a size and the memory it is placed in; the
/// labels in a memory fit in it.
fn walk_labels(root: &Obj, platform: &Platform) -> FieldResult<Vec<Label>> {
    let labels = walk_array(root, "label", |obj| {
        obj.only(&["name", "size", "memory"])?;
        let name = as_name(obj.req("name")?, &obj.field("name"))?;
        let size_bytes = as_positive_size(obj.req("size")?, &obj.field("size"))?;
        let field = obj.field("memory");
        let m = as_str(obj.req("memory")?, &field)?;
        let memory = match platform.memories.iter().position(|x| x.name == m) {
            Some(i) => i,
            None if platform.memories.is_empty() => return Err(FieldError::new(field, "the platform has no memories: a label lives in a [[platform.memory]]")),
            None => return Err(FieldError::new(field, format!("no memory named {}", quote(m)))),
        };
        Ok(Label { name, size_bytes, memory })
    })?;
    let mut seen = HashMap::with_capacity(labels.len());
    for (k, l) in labels.iter().enumerate() {
        if seen.insert(l.name.as_str(), k).is_some() {
            return Err(FieldError::new(format!("label[{k}].name"), format!("duplicate label name {}", quote(&l.name))));
        }
    }
    let mut used = vec![0u64; platform.memories.len()];
    for (k, l) in labels.iter().enumerate() {
        used[l.memory] = used[l.memory].saturating_add(l.size_bytes);
        let m = &platform.memories[l.memory];
        if used[l.memory] > m.size_bytes {
            return Err(FieldError::new(format!("label[{k}].memory"), format!("the labels placed in {} take {} B by here, more than its {} B", quote(&m.name), used[l.memory], m.size_bytes)));
        }
    }
    Ok(labels)
}

/// A runnable's `reads` or `writes`: `{ LABEL = COUNT, … }`, accesses per run.
fn walk_label_counts(r: &Obj, key: &str, labels: &HashMap<&str, usize>, accesses: &mut Vec<LabelAccess>) -> FieldResult<()> {
    let Some(v) = r.opt(key) else { return Ok(()) };
    let field = r.field(key);
    let Some(map) = v.as_object() else {
        return Err(FieldError::new(field, format!("expected a table {{ LABEL = COUNT, … }}, got {}", type_name(v))));
    };
    for (name, count) in map {
        let f = format!("{field}.{name}");
        let Some(&label) = labels.get(name.as_str()) else {
            return Err(FieldError::new(f, if labels.is_empty() { "no [[label]]s: a runnable reads and writes labels the file places in memories".to_string() } else { format!("no label named {}", quote(name)) }));
        };
        let n = as_count(count, &f, 1, 1 << 32)?;
        let at = match accesses.iter().position(|a| a.label == label) {
            Some(at) => at,
            None => {
                accesses.push(LabelAccess { label, reads: 0, writes: 0 });
                accesses.len() - 1
            }
        };
        if key == "reads" { accesses[at].reads = n } else { accesses[at].writes = n }
    }
    Ok(())
}

/// A preset that names a file rather than a built-in set: a path (ends in
/// `.toml` or holds a `/`).
fn is_param_path(preset: &str) -> bool {
    preset.to_ascii_lowercase().ends_with(".toml") || preset.contains(['/', '\\'])
}

fn builtin_preset(name: &str, field: &str) -> FieldResult<Platform> {
    Platform::preset(name).ok_or_else(|| {
        FieldError::new(
            field,
            format!("unknown platform preset {} (expected one of: {}, or the path of a parameter file ending in .toml)", quote(name), Platform::PRESETS.join(", ")),
        )
    })
}

/// A platform parameter set (what `criticore calibrate` writes; the built-in
/// one is `params/imx6-transaction.toml`): `[platform]` with the task file's
/// platform fields (`preset` a built-in base, default `imx6`; `cores`
/// optional), `[study]` with the study cost constants, and the informative
/// `name`, `[fit]` and `[study.check]`. Fields missing keep the base's values.
pub fn parse_params(text: &str) -> FieldResult<Platform> {
    let root = to_value(text, Format::Toml)?;
    let obj = Obj::new(&root, String::new())?;
    obj.only(&["name", "platform", "study", "fit"])?;
    let mut platform = Platform::preset("imx6").expect("built-in preset");
    if let Some(p) = obj.table("platform")? {
        p.only(&["preset", "cores", "llc", "dram", "bus"])?;
        if let Some(v) = p.opt("preset") {
            let field = p.field("preset");
            platform = builtin_preset(as_str(v, &field)?, &field)?;
        }
        if let Some(v) = p.opt("cores") {
            platform.cores = as_count(v, &p.field("cores"), 1, 1024)? as usize;
        }
        platform_fields(&p, &mut platform)?;
    }
    if let Some(t) = obj.table("study")? {
        t.only(&["sbp_fixed_ns", "sbp_ns_per_byte", "dma_bus", "dma_bank", "dma_scale_bytes_per_s", "cpu_sourced_bank", "check"])?;
        let c = &mut platform.costs;
        for (name, slot) in [
            ("sbp_fixed_ns", &mut c.sbp_fixed_ns),
            ("sbp_ns_per_byte", &mut c.sbp_ns_per_byte),
            ("dma_bus", &mut c.dma_bus),
            ("dma_bank", &mut c.dma_bank),
            ("dma_scale_bytes_per_s", &mut c.dma_scale_bytes_per_s),
            ("cpu_sourced_bank", &mut c.cpu_sourced_bank),
        ] {
            if let Some(v) = t.opt(name) {
                *slot = as_rate(v, &t.field(name))?;
            }
        }
        if c.dma_scale_bytes_per_s == 0.0 {
            return Err(FieldError::new(t.field("dma_scale_bytes_per_s"), "must be positive (it divides the DMA rate)"));
        }
    }
    Ok(platform)
}

/// The optional `llc`, `dram` and `bus` tables over `platform`'s values.
fn platform_fields(obj: &Obj, platform: &mut Platform) -> FieldResult<()> {
    let llc = &mut platform.llc;
    if let Some(t) = obj.table("llc")? {
        t.only(&["size", "ways", "colors", "line"])?;
        if let Some(v) = t.opt("size") {
            llc.size_bytes = as_positive_size(v, &t.field("size"))?;
        }
        if let Some(v) = t.opt("ways") {
            llc.ways = as_count(v, &t.field("ways"), 1, 64)? as u32;
        }
        if let Some(v) = t.opt("colors") {
            llc.colors = as_count(v, &t.field("colors"), 1, 4096)? as u32;
        }
        if let Some(v) = t.opt("line") {
            llc.line_bytes = as_positive_size(v, &t.field("line"))?;
        }
        let way_line = (llc.ways as u64).checked_mul(llc.line_bytes).filter(|&b| b <= llc.size_bytes);
        if way_line.is_none_or(|b| llc.size_bytes % b != 0) {
            return Err(FieldError::new(
                t.field("size"),
                format!("{} bytes is not a whole number of {} ways × {}-byte lines", llc.size_bytes, llc.ways, llc.line_bytes),
            ));
        }
    }
    let dram = &mut platform.dram;
    if let Some(t) = obj.table("dram")? {
        t.only(&["banks", "bank_size", "read_latency", "row_conflict"])?;
        if let Some(v) = t.opt("banks") {
            dram.banks = as_count(v, &t.field("banks"), 1, 1024)? as u32;
        }
        if let Some(v) = t.opt("bank_size") {
            dram.bank_size_bytes = as_positive_size(v, &t.field("bank_size"))?;
        }
        if let Some(v) = t.opt("read_latency") {
            dram.read_latency_ns = as_duration_positive(v, &t.field("read_latency"))?;
        }
        if let Some(v) = t.opt("row_conflict") {
            dram.row_conflict_ns = as_duration(v, &t.field("row_conflict"))?;
        }
    }
    let bus = &mut platform.bus;
    if let Some(t) = obj.table("bus")? {
        t.only(&["arbiter", "bandwidth"])?;
        if let Some(v) = t.opt("arbiter") {
            let all: Vec<Arbiter> = Arbiter::NAMES.iter().map(|(_, a)| *a).collect();
            bus.arbiter = walk_arbiter(v, &t.field("arbiter"), &all)?;
        }
        if let Some(v) = t.opt("bandwidth") {
            let field = t.field("bandwidth");
            bus.bandwidth_bytes_per_s = as_bandwidth(v, &field)?;
            if bus.bandwidth_bytes_per_s == 0 {
                return Err(FieldError::new(field, "must be positive"));
            }
        }
    }
    Ok(())
}

/// An arbiter by name, one of `allowed`.
fn walk_arbiter(v: &Value, field: &str, allowed: &[Arbiter]) -> FieldResult<Arbiter> {
    let name = as_str(v, field)?;
    let named = Arbiter::NAMES.iter().filter(|(_, a)| allowed.contains(a));
    named.clone().find(|(n, _)| *n == name).map(|(_, a)| *a).ok_or_else(|| {
        let names: Vec<_> = named.map(|(n, _)| *n).collect();
        FieldError::new(field, format!("unknown arbiter {} (expected one of: {})", quote(name), names.join(", ")))
    })
}

fn walk_level(v: &Value, field: &str) -> FieldResult<Level> {
    let text = as_str(v, field)?;
    Level::parse(text)
        .ok_or_else(|| FieldError::new(field, format!("unknown level {} (expected A, B, C or D)", quote(text))))
}

fn walk_pets(obj: &Obj) -> FieldResult<LevelPets> {
    let mut pets = LevelPets::default();
    for (key, v) in obj.map {
        let field = obj.field(key);
        let level = Level::parse(key)
            .ok_or_else(|| FieldError::new(&field, format!("unknown level {} (expected A, B, C or D)", quote(key))))?;
        pets.set(level, as_duration_positive(v, &field)?);
    }
    // Vestal's MC model: more critical levels get more pessimistic PETs (mc2-hardware-management §2).
    let given: Vec<(Level, u64)> = Level::ALL.iter().filter_map(|&l| pets.get(l).map(|p| (l, p))).collect();
    for pair in given.windows(2) {
        let ((hi, hi_pet), (lo, lo_pet)) = (pair[0], pair[1]);
        if hi_pet < lo_pet {
            return Err(FieldError::new(
                &obj.path,
                format!(
                    "PETs must not decrease from level {lo} to level {hi} ({lo} = {}, {hi} = {})",
                    units::format_duration_ns(lo_pet),
                    units::format_duration_ns(hi_pet)
                ),
            ));
        }
    }
    Ok(pets)
}

/// Levels whose PET a task of `level` must have: its own and every lower analyzed level.
fn required_pet_levels(level: Level) -> &'static [Level] {
    match level {
        Level::A => &[Level::A, Level::B, Level::C],
        Level::B => &[Level::B, Level::C],
        Level::C => &[Level::C],
        Level::D => &[Level::D],
    }
}

fn as_core(v: &Value, field: &str, platform: &Platform) -> FieldResult<usize> {
    let n = as_count(v, field, 0, u32::MAX as u64)?;
    if n as usize >= platform.cores {
        return Err(FieldError::new(
            field,
            format!("core {n} is out of range (the platform has {} cores: 0–{})", platform.cores, platform.cores - 1),
        ));
    }
    Ok(n as usize)
}

/// `level = "A"`…`"D"` (MC²) or a non-negative integer criticality (MCTI §4).
fn walk_task_level(v: &Value, field: &str) -> FieldResult<(Option<Level>, u32)> {
    match v {
        Value::Number(_) => {
            let c = as_count(v, field, 0, u32::MAX as u64)
                .map_err(|_| FieldError::new(field, format!("a numeric criticality must be a non-negative integer, got {v}")))?;
            Ok((None, c as u32))
        }
        _ => {
            let level = walk_level(v, field)?;
            Ok((Some(level), level.criticality()))
        }
    }
}

/// A PET table per level, or one duration meaning the same PET at every level.
fn walk_pet_value(v: &Value, field: String) -> FieldResult<LevelPets> {
    match v {
        Value::String(_) => {
            let pet = as_duration_positive(v, &field)?;
            Ok(LevelPets([Some(pet); 4]))
        }
        _ => walk_pets(&Obj::new(v, field)?),
    }
}

fn walk_task(obj: &Obj, platform: &Platform, servers: &[Server], labels: &HashMap<&str, usize>) -> FieldResult<Task> {
    obj.only(&[
        "name", "level", "core", "period", "deadline", "offset", "arrival", "jitter", "priority", "server", "pet",
        "pet_unmanaged", "memory", "cost", "ipc", "io", "command", "runnables", "preemption", "activation_limit",
        "communication", "copy_in", "copy_out",
    ])?;
    let name = as_name(obj.req("name")?, &obj.field("name"))?;
    if name.trim().is_empty() {
        return Err(FieldError::new(obj.field("name"), "must not be empty"));
    }
    let (level, criticality) = match obj.opt("level") {
        None => (None, 0),
        Some(v) => walk_task_level(v, &obj.field("level"))?,
    };
    let mut core = obj.opt("core").map(|v| as_core(v, &obj.field("core"), platform)).transpose()?;
    let server = match obj.opt("server") {
        None => None,
        Some(v) => {
            let field = obj.field("server");
            let wanted = as_str(v, &field)?;
            let index = servers.iter().position(|s| s.name == wanted).ok_or_else(|| {
                let names: Vec<_> = servers.iter().map(|s| s.name.as_str()).collect();
                FieldError::new(&field, format!("unknown server {} (defined: {})", quote(wanted), if names.is_empty() { "none".to_string() } else { quote_list(names) }))
            })?;
            if let Some(l) = level {
                return Err(FieldError::new(field, format!("a Level-{l} task is scheduled by MC², not by a server; drop `level` or `server`")));
            }
            let server_core = servers[index].core;
            if core.is_some_and(|c| c != server_core) {
                return Err(FieldError::new(
                    obj.field("core"),
                    format!("the task's server {} is on core {server_core}", quote(wanted)),
                ));
            }
            core = Some(server_core);
            Some(index)
        }
    };
    if let Some(level) = level {
        // A task with a cost curve may leave its core to `criticore optimize` (phase 1).
        if level.is_partitioned() && core.is_none() && obj.opt("cost").is_none() {
            return Err(FieldError::new(
                obj.field("core"),
                format!("a Level-{level} task is partitioned and needs a core (mc2-hardware-management §2)"),
            ));
        }
        if level == Level::C && core.is_some() {
            return Err(FieldError::new(obj.field("core"), "Level-C tasks are scheduled globally (G-EDF) and take no core"));
        }
    }
    let arrival = match obj.opt("arrival").map(|v| as_str(v, &obj.field("arrival"))).transpose()? {
        None | Some("periodic") => {
            if obj.opt("jitter").is_some() {
                return Err(FieldError::new(obj.field("jitter"), "jitter needs arrival = \"sporadic\""));
            }
            Arrival::Periodic
        }
        Some("sporadic") => {
            let max_jitter_ns = obj.opt("jitter").map(|v| as_duration(v, &obj.field("jitter"))).transpose()?.unwrap_or(0);
            Arrival::Sporadic { max_jitter_ns }
        }
        Some("background") => {
            // A load runs from its offset to the end: nothing per job to state.
            for field in ["period", "deadline", "jitter", "pet", "pet_unmanaged", "cost", "io", "ipc", "runnables", "preemption", "activation_limit", "communication", "copy_in", "copy_out"] {
                if obj.opt(field).is_some() {
                    return Err(FieldError::new(obj.field(field), "a background task has no jobs; drop this field (or make the task periodic)"));
                }
            }
            if let Some(l @ (Level::A | Level::B | Level::C)) = level {
                return Err(FieldError::new(obj.field("arrival"), format!("Level-{l} tasks are periodic in MC² (mc2-hardware-management §2); a background task is Level D or has no level")));
            }
            Arrival::Background
        }
        Some(other) => {
            return Err(FieldError::new(
                obj.field("arrival"),
                format!("unknown arrival {} (expected periodic, sporadic or background)", quote(other)),
            ))
        }
    };
    let background = arrival == Arrival::Background;
    // A background task's period is set once every task is known (background_stand_in_ns).
    let period_ns = if background { 0 } else { as_duration_positive(obj.req("period")?, &obj.field("period"))? };
    let deadline_ns = match obj.opt("deadline") {
        None => period_ns,
        Some(v) => {
            let field = obj.field("deadline");
            let d = as_duration_positive(v, &field)?;
            if let Some(l @ (Level::A | Level::B | Level::C)) = level {
                if d != period_ns {
                    return Err(FieldError::new(
                        field,
                        format!("Level-{l} tasks have implicit deadlines (deadline = period) in MC² (mc2-hardware-management §2)"),
                    ));
                }
            }
            d
        }
    };
    let offset_ns = obj.opt("offset").map(|v| as_duration(v, &obj.field("offset"))).transpose()?.unwrap_or(0);
    // MC² §2: Level-A and -B tasks are periodic and all commence at time 0.
    if let Some(l @ (Level::A | Level::B)) = level {
        if offset_ns != 0 {
            return Err(FieldError::new(obj.field("offset"), format!("Level-{l} tasks start at time 0 in MC² (mc2-hardware-management §2)")));
        }
        if arrival != Arrival::Periodic {
            return Err(FieldError::new(obj.field("arrival"), format!("Level-{l} tasks are periodic in MC² (mc2-hardware-management §2)")));
        }
    }
    let priority = match obj.opt("priority") {
        None => None,
        Some(v) => Some(
            v.as_i64()
                .ok_or_else(|| FieldError::new(obj.field("priority"), format!("expected an integer, got {}", type_name(v))))?,
        ),
    };
    let preemption = match obj.opt("preemption").map(|v| as_str(v, &obj.field("preemption"))).transpose()? {
        None | Some("preemptive") => Preemption::Preemptive,
        Some("cooperative") => Preemption::Cooperative,
        Some("non-preemptive") => Preemption::NonPreemptive,
        Some(other) => return Err(FieldError::new(obj.field("preemption"), format!("unknown preemption {} (expected preemptive, cooperative or non-preemptive)", quote(other)))),
    };
    if preemption != Preemption::Preemptive && level.is_some() {
        return Err(FieldError::new(obj.field("preemption"), "MC² tasks are preemptive (mc2-hardware-management §2)"));
    }
    let communication = match obj.opt("communication").map(|v| as_str(v, &obj.field("communication"))).transpose()? {
        None | Some("implicit") => Communication::Implicit,
        Some("explicit") => Communication::Explicit,
        Some("let") => Communication::Let,
        Some(other) => return Err(FieldError::new(obj.field("communication"), format!("unknown communication {} (expected implicit, explicit or let)", quote(other)))),
    };
    let activation_limit = match obj.opt("activation_limit") {
        None => None,
        Some(v) => match v.as_i64() {
            Some(n) if (1..=u32::MAX as i64).contains(&n) => Some(n as u32),
            Some(n) => return Err(FieldError::new(obj.field("activation_limit"), format!("expected a positive integer (jobs active at once), got {n}"))),
            None => return Err(FieldError::new(obj.field("activation_limit"), format!("expected a positive integer (jobs active at once), got {}", type_name(v)))),
        },
    };
    let pet_field = obj.field("pet");
    let copy = |key: &str| obj.opt(key).map(|v| as_duration(v, &obj.field(key))).transpose().map(Option::unwrap_or_default);
    let (copy_in_ns, copy_out_ns) = (copy("copy_in")?, copy("copy_out")?);
    let copies = copy_in_ns.saturating_add(copy_out_ns);
    if copies > 0 && level.is_some() {
        let key = if copy_in_ns > 0 { "copy_in" } else { "copy_out" };
        return Err(FieldError::new(obj.field(key), "MC² tasks are preemptive (mc2-hardware-management §2): no non-preemptive copies"));
    }
    let runnables = walk_runnables(obj, labels, platform)?;
    // A job's work: its copy-in, its runnables, its copy-out.
    let steps = |sum: u64| sum.saturating_add(copies);
    let pet_ns = match (background, obj.opt("pet"), runnables.is_empty()) {
        (true, _, _) => LevelPets([Some(0); 4]),
        // Runnables without a PET: theirs summed with the copies, at every level.
        (false, None, false) => match steps(runnables.iter().map(|r| r.pet_ns).sum::<u64>()) {
            0 => return Err(FieldError::new(obj.field("runnables"), "they sum to 0: a task needs a positive PET")),
            sum => LevelPets([Some(sum); 4]),
        },
        (false, Some(v @ Value::String(_)), false) => {
            let sum = steps(runnables.iter().map(|r| r.pet_ns).sum());
            match as_duration_positive(v, &pet_field)? {
                pet if pet == sum => LevelPets([Some(sum); 4]),
                pet => {
                    let what = if copies > 0 { "its copies and runnables" } else { "its runnables" };
                    let (pet, sum) = (units::format_duration_ns(pet), units::format_duration_ns(sum));
                    return Err(FieldError::new(pet_field, format!("{pet}, but {what} sum to {sum} (leave `pet` out to take their sum)")));
                }
            }
        }
        (false, Some(_), false) => return Err(FieldError::new(pet_field, "a task with runnables has one PET, their sum: a duration, not a table per level")),
        (false, _, true) => walk_pet_value(obj.req("pet")?, pet_field.clone())?,
    };
    let unmanaged_field = obj.field("pet_unmanaged");
    let pet_unmanaged_ns = obj.opt("pet_unmanaged").map(|v| walk_pet_value(v, unmanaged_field.clone())).transpose()?;
    match level {
        _ if background => {}
        Some(level) => {
            for (pets, path) in std::iter::once((&pet_ns, &pet_field)).chain(pet_unmanaged_ns.as_ref().map(|p| (p, &unmanaged_field))) {
                for &needed in required_pet_levels(level) {
                    if pets.get(needed).is_none() {
                        return Err(FieldError::new(
                            join(path, &needed.to_string()),
                            format!("missing: a Level-{level} task needs a PET at level {needed}"),
                        ));
                    }
                }
            }
        }
        None if pet_ns.highest().is_none() => return Err(FieldError::new(pet_field, "needs at least one PET")),
        None => {}
    }
    if let Some(pet) = pet_ns.0.iter().flatten().copied().filter(|&p| p < copies).min().filter(|_| !background) {
        let (pet, copies) = (units::format_duration_ns(pet), units::format_duration_ns(copies));
        return Err(FieldError::new(pet_field, format!("{pet}, less than its copy_in and copy_out together ({copies}), which are part of it")));
    }
    let memory = obj.table("memory")?.map(|m| walk_memory(&m)).transpose()?;
    let cost = obj.table("cost")?.map(|c| walk_cost(&c, platform)).transpose()?;
    let io = obj.table("io")?.map(|t| walk_io(&t, platform)).transpose()?;
    if level == Some(Level::C) && matches!(io.and_then(|io| io.buffer), Some(Partition::Core(_))) {
        return Err(FieldError::new(join(&obj.field("io"), "buffer"), "Level-C buffers live in the Level-C banks (mc2-io-ipc-os-isolation Table 1)"));
    }
    Ok(Task {
        name,
        level,
        criticality,
        core,
        period_ns,
        deadline_ns,
        offset_ns,
        arrival,
        priority,
        server,
        pet_ns,
        pet_unmanaged_ns,
        memory,
        cost,
        ipc: None, // resolved by walk_ipc_links once every task name is known
        io,
        command: obj.opt("command").map(|v| walk_command(v, &obj.field("command"))).transpose()?,
        runnables,
        preemption,
        activation_limit,
        communication,
        copy_in_ns,
        copy_out_ns,
    })
}

/// `runnables = [{ name = "R1", pet = "10us" }, …]`: a job's named steps in
/// order, each with its PET (or `ticks = N`, cycles at `platform.clock`, or
/// `instructions = N` at `platform.instructions_per_cycle`; rounded up to a
/// whole ns, once).
fn walk_runnables(obj: &Obj, labels: &HashMap<&str, usize>, platform: &Platform) -> FieldResult<Vec<Runnable>> {
    let field = obj.field("runnables");
    let items = match obj.opt("runnables") {
        None => return Ok(Vec::new()),
        Some(Value::Array(items)) if !items.is_empty() => items,
        Some(Value::Array(_)) => return Err(FieldError::new(field, "empty: leave it out for a job of one piece")),
        Some(other) => return Err(FieldError::new(field, format!("expected an array of tables {{ name, pet }}, got {}", type_name(other)))),
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let r = Obj::new(item, format!("{field}[{i}]"))?;
            r.only(&["name", "pet", "ticks", "instructions", "min", "mean", "draw", "p_remain", "reads", "writes"])?;
            let name = as_name(r.req("name")?, &r.field("name"))?;
            if name.trim().is_empty() {
                return Err(FieldError::new(r.field("name"), "must not be empty"));
            }
            let given: Vec<&str> = ["pet", "ticks", "instructions"].into_iter().filter(|k| r.opt(k).is_some()).collect();
            let pet_ns = match given.as_slice() {
                [] => as_duration(r.req("pet")?, &r.field("pet"))?,
                ["pet"] => as_duration(r.req("pet")?, &r.field("pet"))?,
                [unit] => {
                    let f = r.field(unit);
                    let Some(clock_hz) = platform.clock_hz else {
                        let why = if *unit == "ticks" { "ticks are cycles of the cores' clock" } else { "instructions run at platform.instructions_per_cycle per cycle of the cores' clock" };
                        return Err(FieldError::new(f, format!("{why}: give platform.clock")));
                    };
                    let v = r.req(unit)?;
                    let n = match v.as_i64() {
                        Some(n) if n >= 0 => n as u64,
                        _ => return Err(FieldError::new(f, format!("expected a whole number of {unit} (0 or more), got {v}"))),
                    };
                    // Instructions at platform.instructions_per_cycle (1 if not given), rounded once.
                    let (per, cycles) = if *unit == "ticks" { (1, 1) } else { platform.instructions_per_cycle.unwrap_or((1, 1)) };
                    let ns = (n as u128 * cycles as u128 * 1_000_000_000).div_ceil(per as u128 * clock_hz as u128);
                    u64::try_from(ns).ok().filter(|&ns| ns <= i64::MAX as u64).ok_or_else(|| FieldError::new(r.field(unit), "its execution time does not fit in 64-bit nanoseconds"))?
                }
                [.., last] => return Err(FieldError::new(r.field(last), format!("give one of pet, ticks or instructions, not {}", given.join(" and ")))),
            };
            let mut accesses = Vec::new();
            walk_label_counts(&r, "reads", labels, &mut accesses)?;
            walk_label_counts(&r, "writes", labels, &mut accesses)?;
            Ok(Runnable { name, pet_ns, need: walk_need(&r, pet_ns)?, accesses })
        })
        .collect()
}

/// A runnable's `draw` (`model::need`): `uniform` from `min` to its PET, or
/// `weibull` (Amalthea's Weibull estimators) with `min`, `mean` and
/// `p_remain`; the three only with a draw.
fn walk_need(r: &Obj, pet_ns: u64) -> FieldResult<Option<crate::model::need::Need>> {
    use crate::model::need::Need;
    let draw = match r.opt("draw") {
        None => {
            return match ["min", "mean", "p_remain"].into_iter().find(|k| r.opt(k).is_some()) {
                Some(k) => Err(FieldError::new(r.field(k), "needs a `draw` (uniform or weibull): without one the runnable always takes its PET")),
                None => Ok(None),
            };
        }
        Some(v) => as_str(v, &r.field("draw"))?,
    };
    let min_ns = as_duration(r.req("min")?, &r.field("min"))?;
    if min_ns > pet_ns {
        return Err(FieldError::new(r.field("min"), format!("{}, above the PET ({})", units::format_duration_ns(min_ns), units::format_duration_ns(pet_ns))));
    }
    match draw {
        "uniform" => {
            if let Some(k) = ["mean", "p_remain"].into_iter().find(|k| r.opt(k).is_some()) {
                return Err(FieldError::new(r.field(k), "a uniform draw has only `min` (and the PET)"));
            }
            Ok(Some(Need::uniform(min_ns)))
        }
        "weibull" => {
            let mean_ns = as_duration(r.req("mean")?, &r.field("mean"))?;
            let p_remain = as_number(r.req("p_remain")?, &r.field("p_remain"))?;
            Need::weibull(min_ns, mean_ns as f64, pet_ns, p_remain).map(Some).map_err(|why| {
                let key = if why.starts_with("p_remain") { "p_remain" } else { "mean" };
                FieldError::new(r.field(key), why)
            })
        }
        other => Err(FieldError::new(r.field("draw"), format!("unknown draw {} (expected uniform or weibull)", quote(other)))),
    }
}

/// A command as an array of arguments, or a string split at whitespace (no
/// shell quoting: use the array form for arguments with spaces).
fn walk_command(v: &Value, field: &str) -> FieldResult<Vec<String>> {
    let argv: Vec<String> = match v {
        Value::String(s) => s.split_whitespace().map(str::to_string).collect(),
        Value::Array(items) => items.iter().enumerate().map(|(i, x)| as_str(x, &format!("{field}[{i}]")).map(str::to_string)).collect::<FieldResult<_>>()?,
        _ => return Err(FieldError::new(field, "expected a command: a string or an array of arguments")),
    };
    if argv.is_empty() || argv[0].is_empty() {
        return Err(FieldError::new(field, "empty command"));
    }
    Ok(argv)
}

fn walk_cost(obj: &Obj, platform: &Platform) -> FieldResult<CostCurve> {
    obj.only(&["llc_slowdown", "wss_ways", "reload"])?;
    let llc_slowdown = as_number(obj.req("llc_slowdown")?, &obj.field("llc_slowdown"))?;
    if !(llc_slowdown >= 1.0 && llc_slowdown.is_finite()) {
        return Err(FieldError::new(obj.field("llc_slowdown"), format!("must be a number ≥ 1 (cost without LLC / cost with all of it), got {llc_slowdown}")));
    }
    let wss_ways = as_count(obj.req("wss_ways")?, &obj.field("wss_ways"), 1, platform.llc.ways as u64)? as u32;
    let reload = obj.opt("reload").map(|v| as_fraction(v, &obj.field("reload"))).transpose()?.unwrap_or(0.0);
    Ok(CostCurve { llc_slowdown, wss_ways, reload })
}

fn walk_ipc_method(v: &Value, field: &str) -> FieldResult<IpcMethod> {
    let name = as_str(v, field)?;
    IpcMethod::parse(name).ok_or_else(|| FieldError::new(field, format!("unknown IPC method {} (expected sbp, ce or cl)", quote(name))))
}

fn walk_io(obj: &Obj, platform: &Platform) -> FieldResult<IoBuffer> {
    obj.only(&["bandwidth", "kind", "buffer"])?;
    let bandwidth_bytes_per_s = as_bandwidth(obj.req("bandwidth")?, &obj.field("bandwidth"))?;
    let kind = as_str(obj.req("kind")?, &obj.field("kind"))?;
    let kind = IoKind::parse(kind)
        .ok_or_else(|| FieldError::new(obj.field("kind"), format!("unknown I/O kind {} (expected direct or copy)", quote(kind))))?;
    let buffer = match obj.opt("buffer") {
        None => None,
        Some(v) => {
            let field = obj.field("buffer");
            match walk_partition(as_str(v, &field)?, &field, platform)? {
                p @ (Partition::Core(_) | Partition::LevelC) => Some(p),
                _ => return Err(FieldError::new(field, "an I/O buffer lives in a core's Level-A/B bank (core<N>) or in the Level-C banks (levelC)")),
            }
        }
    };
    Ok(IoBuffer { bandwidth_bytes_per_s, kind, buffer })
}

/// `ipc = { to, size, method }` of every task, once all names are known.
fn walk_ipc_links(tasks_value: Option<&Value>, tasks: &mut [Task], platform: &Platform) -> FieldResult<()> {
    let Some(items) = tasks_value.and_then(|v| v.as_array()) else { return Ok(()) };
    for (i, item) in items.iter().enumerate() {
        let obj = Obj::new(item, format!("task[{i}]"))?;
        let Some(t) = obj.table("ipc")? else { continue };
        t.only(&["to", "size", "method", "buffer"])?;
        let to_field = t.field("to");
        let wanted = as_str(t.req("to")?, &to_field)?;
        let to = tasks.iter().position(|x| x.name == wanted).ok_or_else(|| FieldError::new(&to_field, format!("unknown task {}", quote(wanted))))?;
        if to == i {
            return Err(FieldError::new(to_field, "a task cannot send messages to itself"));
        }
        let (me, peer) = (&tasks[i], &tasks[to]);
        if me.period_ns != peer.period_ns {
            return Err(FieldError::new(to_field, format!("communicating tasks share a period (mc2-io-ipc-os-isolation §6.1); {} has another", quote(wanted))));
        }
        if me.level != peer.level || !matches!(me.level, Some(Level::A | Level::B | Level::C)) {
            return Err(FieldError::new(to_field, "IPC links join two tasks of the same level A, B or C (no cross-criticality sharing, mc2-io-ipc-os-isolation §6 footnote 11)"));
        }
        let bytes = as_positive_size(t.req("size")?, &t.field("size"))?;
        let method = t.opt("method").map(|v| walk_ipc_method(v, &t.field("method"))).transpose()?;
        if method == Some(IpcMethod::Ce) && (me.level == Some(Level::C) || me.core.is_none() || me.core != peer.core) {
            return Err(FieldError::new(t.field("method"), "concurrency elimination (ce) needs both tasks on the same core (mc2-io-ipc-os-isolation §4.2)"));
        }
        let buffer = match t.opt("buffer") {
            None => None,
            Some(v) => {
                let field = t.field("buffer");
                if method.is_some() {
                    return Err(FieldError::new(field, "`buffer` places an unmanaged buffer; a managed one (`method`) is placed by its technique"));
                }
                match walk_partition(as_str(v, &field)?, &field, platform)? {
                    p @ (Partition::Core(_) | Partition::LevelC) => Some(p),
                    _ => return Err(FieldError::new(field, "an IPC buffer lives in a core's Level-A/B bank (core<N>) or in the Level-C banks (levelC)")),
                }
            }
        };
        if me.level == Some(Level::C) && matches!(buffer, Some(Partition::Core(_))) {
            return Err(FieldError::new(t.field("buffer"), "Level-C buffers live in the Level-C banks (mc2-io-ipc-os-isolation Table 1)"));
        }
        tasks[i].ipc = Some(IpcLink { to, bytes, method, buffer });
    }
    Ok(())
}

fn walk_server(obj: &Obj, platform: &Platform) -> FieldResult<Server> {
    obj.only(&["name", "core", "kind", "period", "budget", "priority", "memory_budget"])?;
    let name = as_name(obj.req("name")?, &obj.field("name"))?;
    if name.trim().is_empty() {
        return Err(FieldError::new(obj.field("name"), "must not be empty"));
    }
    let core = as_core(obj.req("core")?, &obj.field("core"), platform)?;
    let kind = match obj.opt("kind").map(|v| as_str(v, &obj.field("kind"))).transpose()? {
        None | Some("periodic") => ServerKind::Periodic,
        Some("cbs") => ServerKind::Cbs,
        Some(other) => {
            return Err(FieldError::new(obj.field("kind"), format!("unknown server kind {} (expected periodic or cbs)", quote(other))))
        }
    };
    let period_ns = as_duration_positive(obj.req("period")?, &obj.field("period"))?;
    let budget_ns = as_duration_positive(obj.req("budget")?, &obj.field("budget"))?;
    if budget_ns > period_ns {
        return Err(FieldError::new(obj.field("budget"), "a server's budget cannot exceed its period"));
    }
    let priority = match obj.opt("priority") {
        None => 0,
        Some(v) => v
            .as_i64()
            .ok_or_else(|| FieldError::new(obj.field("priority"), format!("expected an integer, got {}", type_name(v))))?,
    };
    let memory_budget = obj
        .opt("memory_budget")
        .map(|v| as_count(v, &obj.field("memory_budget"), 0, u64::MAX >> 1))
        .transpose()?;
    Ok(Server { name, core, kind, period_ns, budget_ns, priority, memory_budget })
}

fn as_fraction(v: &Value, field: &str) -> FieldResult<f64> {
    let r = as_number(v, field)?;
    if !(0.0..=1.0).contains(&r) {
        return Err(FieldError::new(field, format!("must be between 0 and 1, got {r}")));
    }
    Ok(r)
}

fn as_rate(v: &Value, field: &str) -> FieldResult<f64> {
    let r = as_number(v, field)?;
    if !(r >= 0.0 && r.is_finite()) {
        return Err(FieldError::new(field, format!("must be a non-negative number, got {r}")));
    }
    Ok(r)
}

fn walk_memory(obj: &Obj) -> FieldResult<MemoryProfile> {
    obj.only(&["wss", "accesses_per_ms", "read_fraction", "pattern", "phases", "ipc", "syscalls"])?;
    let wss_bytes = as_size(obj.req("wss")?, &obj.field("wss"))?;
    let pattern = match obj.opt("pattern").map(|v| as_str(v, &obj.field("pattern"))).transpose()? {
        None | Some("random") => AccessPattern::Random,
        Some("stream") => AccessPattern::Stream,
        Some(other) => {
            return Err(FieldError::new(obj.field("pattern"), format!("unknown access pattern {} (expected random or stream)", quote(other))))
        }
    };
    let read_fraction = obj.opt("read_fraction").map(|v| as_fraction(v, &obj.field("read_fraction"))).transpose()?.unwrap_or(1.0);
    let phases = match obj.opt("phases") {
        None => vec![MemoryPhase {
            work_ns: None,
            accesses_per_ms: as_rate(obj.req("accesses_per_ms")?, &obj.field("accesses_per_ms"))?,
            read_fraction,
        }],
        Some(v) => {
            let field = obj.field("phases");
            let items = v.as_array().filter(|a| !a.is_empty()).ok_or_else(|| FieldError::new(&field, "expected a non-empty array of phase tables"))?;
            let default_rate = obj.opt("accesses_per_ms").map(|v| as_rate(v, &obj.field("accesses_per_ms"))).transpose()?;
            let mut phases = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let p = Obj::new(item, format!("{field}[{i}]"))?;
                p.only(&["work", "accesses_per_ms", "read_fraction"])?;
                let work_ns = p.opt("work").map(|v| as_duration_positive(v, &p.field("work"))).transpose()?;
                if work_ns.is_none() && i + 1 < items.len() {
                    return Err(FieldError::new(p.field("work"), "only the last phase may leave out its length"));
                }
                let accesses_per_ms = match (p.opt("accesses_per_ms"), default_rate) {
                    (Some(v), _) => as_rate(v, &p.field("accesses_per_ms"))?,
                    (None, Some(r)) => r,
                    (None, None) => return Err(FieldError::new(p.field("accesses_per_ms"), "missing required field")),
                };
                let rf = p.opt("read_fraction").map(|v| as_fraction(v, &p.field("read_fraction"))).transpose()?.unwrap_or(read_fraction);
                phases.push(MemoryPhase { work_ns, accesses_per_ms, read_fraction: rf });
            }
            phases
        }
    };
    let ipc = match obj.table("ipc")? {
        None => None,
        Some(t) => {
            t.only(&["bytes", "accesses_per_ms", "method"])?;
            let method = walk_ipc_method(t.req("method")?, &t.field("method"))?;
            Some(IpcProfile {
                bytes: as_positive_size(t.req("bytes")?, &t.field("bytes"))?,
                accesses_per_ms: as_rate(t.req("accesses_per_ms")?, &t.field("accesses_per_ms"))?,
                method,
            })
        }
    };
    let syscalls = match obj.table("syscalls")? {
        None => None,
        Some(t) => {
            t.only(&["per_ms", "footprint"])?;
            Some(SyscallProfile {
                per_ms: as_rate(t.req("per_ms")?, &t.field("per_ms"))?,
                footprint_bytes: as_positive_size(t.req("footprint")?, &t.field("footprint"))?,
            })
        }
    };
    Ok(MemoryProfile { wss_bytes, pattern, phases, ipc, syscalls })
}

fn walk_device(obj: &Obj, platform: &Platform) -> FieldResult<Device> {
    obj.only(&["name", "period", "bytes", "bandwidth", "buffer", "irq"])?;
    let name = as_name(obj.req("name")?, &obj.field("name"))?;
    let period_ns = as_duration_positive(obj.req("period")?, &obj.field("period"))?;
    let bytes = as_positive_size(obj.req("bytes")?, &obj.field("bytes"))?;
    let f = obj.field("bandwidth");
    let bandwidth_bytes_per_s = as_bandwidth(obj.req("bandwidth")?, &f)?;
    if bandwidth_bytes_per_s == 0 {
        return Err(FieldError::new(f, "must be positive"));
    }
    if (bytes as u128) * 1_000_000_000 / bandwidth_bytes_per_s as u128 > period_ns as u128 {
        return Err(FieldError::new(obj.field("bytes"), "a transfer takes longer than the device period at this bandwidth"));
    }
    let buffer = match obj.opt("buffer") {
        None => Partition::LevelC,
        Some(v) => {
            let f = obj.field("buffer");
            walk_partition(as_str(v, &f)?, &f, platform)?
        }
    };
    let irq_ns = obj.opt("irq").map(|v| as_duration(v, &obj.field("irq"))).transpose()?.unwrap_or(0);
    if irq_ns >= period_ns {
        return Err(FieldError::new(obj.field("irq"), "interrupt handling must take less than the device period"));
    }
    Ok(Device { name, period_ns, bytes, bandwidth_bytes_per_s, buffer, irq_ns })
}

fn walk_regulation(obj: &Obj, platform: &Platform, tasks: &[Task]) -> FieldResult<Regulation> {
    obj.only(&[
        "kind", "period", "budget", "budgets", "group", "reclaim", "reclaim_min", "spare_sharing", "rt_task", "be_cores", "sample",
        "threshold", "overhead_table",
    ])?;
    let field = obj.field("kind");
    let name = as_str(obj.req("kind")?, &field)?;
    let kind = RegulationKind::parse(name).ok_or_else(|| {
        let names: Vec<_> = RegulationKind::NAMES.iter().map(|(n, _)| *n).collect();
        FieldError::new(&field, format!("unknown regulation {} (expected one of: {})", quote(name), names.join(", ")))
    })?;
    // MemGuard's default period is 1 ms (docs/references.md, Regulation: MemGuard); MCTI uses the same (mcti-task-isolation §6.1.2).
    let period_ns = obj.opt("period").map(|v| as_duration_positive(v, &obj.field("period"))).transpose()?.unwrap_or(1_000_000);
    let groups = walk_budget_groups(obj, tasks, platform, period_ns)?;
    if !groups.is_empty() && (obj.opt("budget").is_some() || obj.opt("budgets").is_some()) {
        return Err(FieldError::new(obj.field("group"), "give budgets per core (budget, budgets) or per group ([[regulation.group]]), not both"));
    }
    let budgets = match (obj.opt("budget"), obj.opt("budgets")) {
        (Some(_), Some(_)) => return Err(FieldError::new(obj.field("budgets"), "give either budget (all cores) or budgets (per core)")),
        (Some(v), None) => vec![as_requests(v, &obj.field("budget"), platform, period_ns)?; platform.cores],
        (None, Some(v)) => {
            let f = obj.field("budgets");
            let items = v.as_array().ok_or_else(|| FieldError::new(&f, "expected an array with one budget per core"))?;
            if items.len() != platform.cores {
                return Err(FieldError::new(&f, format!("expected {} budgets (one per core), got {}", platform.cores, items.len())));
            }
            items.iter().enumerate().map(|(i, x)| as_requests(x, &format!("{f}[{i}]"), platform, period_ns)).collect::<FieldResult<_>>()?
        }
        (None, None) => {
            if groups.is_empty() && matches!(kind, RegulationKind::Memguard | RegulationKind::Mcti) {
                return Err(FieldError::new(obj.field("budgets"), "MemGuard and MCTI need a per-core budget (budget or budgets)"));
            }
            vec![u64::MAX >> 1; platform.cores]
        }
    };
    let monitor = if kind == RegulationKind::Monitor {
        let f = obj.field("rt_task");
        let rt_name = as_str(obj.req("rt_task")?, &f)?;
        let rt_task = tasks.iter().position(|t| t.name == rt_name).ok_or_else(|| FieldError::new(&f, format!("no task named {}", quote(rt_name))))?;
        if tasks[rt_task].is_background() {
            return Err(FieldError::new(&f, format!("{} is a background task: the monitor times the real-time task's jobs (blin-bandwidth-monitor §3)", quote(rt_name))));
        }
        let f = obj.field("be_cores");
        let be_cores: Vec<usize> = walk_index_list(obj.req("be_cores")?, &f, platform.cores as u32, "core")?.into_iter().map(|c| c as usize).collect();
        if let Some(rt_core) = tasks[rt_task].core {
            if be_cores.contains(&rt_core) {
                return Err(FieldError::new(obj.field("be_cores"), format!("core {rt_core} runs the real-time task; the monitor would suspend it")));
            }
        }
        let sample_ns = obj.opt("sample").map(|v| as_duration_positive(v, &obj.field("sample"))).transpose()?.unwrap_or(50_000);
        let threshold = as_fraction(obj.req("threshold")?, &obj.field("threshold"))?;
        let table_file = as_str(obj.req("overhead_table")?, &obj.field("overhead_table"))?.to_string();
        Some(MonitorConfig { rt_task, be_cores, sample_ns, threshold, table_file })
    } else {
        None
    };
    if !groups.is_empty() && kind != RegulationKind::Memguard {
        return Err(FieldError::new(obj.field("group"), "budget groups are a MemGuard option (kind = \"memguard\")"));
    }
    let flag = |key: &str| -> FieldResult<bool> {
        obj.opt(key).map(|v| v.as_bool().ok_or_else(|| FieldError::new(obj.field(key), "expected true or false"))).transpose().map(|b| b.unwrap_or(false))
    };
    let memguard = MemguardOptions {
        reclaim: flag("reclaim")?,
        // MemGuard's qmin default is 500 MB/s worth (docs/references.md, Runtime §1).
        reclaim_min: match obj.opt("reclaim_min") {
            Some(v) => as_requests(v, &obj.field("reclaim_min"), platform, period_ns)? as f64,
            None => (500_000_000u128 * period_ns as u128 / 1_000_000_000 / platform.llc.line_bytes as u128) as f64,
        },
        spare_sharing: flag("spare_sharing")?,
    };
    if (memguard.reclaim || memguard.spare_sharing) && kind != RegulationKind::Memguard {
        return Err(FieldError::new(obj.field(if memguard.reclaim { "reclaim" } else { "spare_sharing" }), "a MemGuard option (kind = \"memguard\")"));
    }
    Ok(Regulation { kind, period_ns, budgets, groups, memguard, monitor })
}

/// A budget in requests per regulation period (a request moves one LLC
/// line: MemGuard counts LLC misses): a count, or a bandwidth string turned
/// into whole lines per period, rounded down so the budget never exceeds the
/// bandwidth: ⌊B · P / (10⁹ ns/s · line)⌋, exact in integers ("100MB/s" at
/// 1 ms and 64 B lines = ⌊1562.5⌋ = 1562 requests).
fn as_requests(v: &Value, field: &str, platform: &Platform, period_ns: u64) -> FieldResult<u64> {
    if let Some(text) = v.as_str() {
        let bytes_per_s = as_bandwidth(v, field)?;
        let line = platform.llc.line_bytes;
        let per_period = bytes_per_s as u128 * period_ns as u128 / (1_000_000_000 * line as u128);
        if per_period == 0 && bytes_per_s > 0 {
            return Err(FieldError::new(
                field,
                format!("{} is less than one {line}-byte line per {} period", quote(text), units::format_duration_ns(period_ns)),
            ));
        }
        return u64::try_from(per_period)
            .ok()
            .filter(|&n| n <= u64::MAX >> 1)
            .ok_or_else(|| FieldError::new(field, format!("{} is out of range as requests per period", quote(text))));
    }
    as_count(v, field, 0, u64::MAX >> 1)
        .map_err(|e| FieldError::new(e.field, format!("{} (requests per period, or a bandwidth like \"100MB/s\")", e.reason)))
}

fn walk_budget_groups(obj: &Obj, tasks: &[Task], platform: &Platform, period_ns: u64) -> FieldResult<Vec<BudgetGroup>> {
    let Some(v) = obj.opt("group") else { return Ok(Vec::new()) };
    let f = obj.field("group");
    let items = v.as_array().ok_or_else(|| FieldError::new(&f, "expected an array of tables ([[regulation.group]])"))?;
    let mut groups: Vec<BudgetGroup> = Vec::new();
    let mut owner: Vec<Option<usize>> = vec![None; tasks.len()];
    for (i, item) in items.iter().enumerate() {
        let gf = format!("{f}[{i}]");
        let g = item.as_object().ok_or_else(|| FieldError::new(&gf, "expected a table"))?;
        for key in g.keys() {
            if !["name", "tasks", "budget"].contains(&key.as_str()) {
                return Err(FieldError::new(field_path(&gf, key), "unknown field (expected one of: name, tasks, budget)"));
            }
        }
        let name = g.get("name").ok_or_else(|| FieldError::new(format!("{gf}.name"), "missing"))?;
        let name = as_name(name, &format!("{gf}.name"))?;
        if groups.iter().any(|x| x.name == name) {
            return Err(FieldError::new(format!("{gf}.name"), format!("a second group named {}", quote(&name))));
        }
        let tf = format!("{gf}.tasks");
        let list = g.get("tasks").and_then(|t| t.as_array()).ok_or_else(|| FieldError::new(&tf, "expected an array of task names"))?;
        let mut members = Vec::new();
        for (j, t) in list.iter().enumerate() {
            let tname = as_str(t, &format!("{tf}[{j}]"))?;
            let index = tasks.iter().position(|x| x.name == tname).ok_or_else(|| FieldError::new(format!("{tf}[{j}]"), format!("no task named {}", quote(tname))))?;
            if let Some(other) = owner[index] {
                return Err(FieldError::new(format!("{tf}[{j}]"), format!("task {} is already in group {}", quote(tname), quote(&groups[other].name))));
            }
            owner[index] = Some(i);
            members.push(index);
        }
        let budget = g.get("budget").ok_or_else(|| FieldError::new(format!("{gf}.budget"), "missing (requests per period, or a bandwidth like \"100MB/s\")"))?;
        let budget = as_requests(budget, &format!("{gf}.budget"), platform, period_ns)?;
        groups.push(BudgetGroup { name, tasks: members, budget });
    }
    Ok(groups)
}

fn walk_partition(key: &str, field: &str, platform: &Platform) -> FieldResult<Partition> {
    match key {
        "levelC" => Ok(Partition::LevelC),
        "os" => Ok(Partition::Os),
        "lock" => Ok(Partition::Lock),
        _ => {
            // Canonical spelling only ("core1", not "core01" or "core+1"), so one core has one key.
            let core = key
                .strip_prefix("core")
                .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && (n.len() == 1 || !n.starts_with('0')))
                .and_then(|n| n.parse::<usize>().ok())
                .ok_or_else(|| FieldError::new(field, "unknown partition (expected core<N>, levelC, os or lock)"))?;
            if core >= platform.cores {
                return Err(FieldError::new(
                    field,
                    format!("core {core} is out of range (the platform has {} cores)", platform.cores),
                ));
            }
            Ok(Partition::Core(core))
        }
    }
}

fn walk_index_list(v: &Value, field: &str, limit: u32, what: &str) -> FieldResult<Vec<u32>> {
    let items = v
        .as_array()
        .ok_or_else(|| FieldError::new(field, format!("expected an array of {what} indices, got {}", type_name(v))))?;
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let item_field = format!("{field}[{i}]");
        let n = as_count(item, &item_field, 0, u32::MAX as u64)? as u32;
        if n >= limit {
            return Err(FieldError::new(item_field, format!("{what} {n} is out of range (the platform has {limit})")));
        }
        if out.contains(&n) {
            return Err(FieldError::new(item_field, format!("{what} {n} is listed twice")));
        }
        out.push(n);
    }
    Ok(out)
}

fn walk_allocation(obj: &Obj, platform: &Platform) -> FieldResult<Allocation> {
    obj.only(&["llc_ways", "llc_colors", "banks", "os_isolation"])?;
    let mut allocation = Allocation::default();
    if let Some(v) = obj.opt("os_isolation") {
        allocation.os_isolation = v.as_bool().ok_or_else(|| FieldError::new(obj.field("os_isolation"), format!("expected true or false, got {}", type_name(v))))?;
    }
    if let Some(t) = obj.table("llc_ways")? {
        let mut total = 0u64;
        for (key, v) in t.map {
            let field = t.field(key);
            let partition = walk_partition(key, &field, platform)?;
            let ways = as_count(v, &field, 0, platform.llc.ways as u64)? as u32;
            total += ways as u64;
            allocation.llc_ways.push((partition, ways));
        }
        if total > platform.llc.ways as u64 {
            return Err(FieldError::new(
                &t.path,
                format!("{total} ways allocated but the LLC has only {}", platform.llc.ways),
            ));
        }
    }
    if let Some(t) = obj.table("llc_colors")? {
        for (key, v) in t.map {
            let field = t.field(key);
            let partition = walk_partition(key, &field, platform)?;
            allocation.llc_colors.push((partition, walk_index_list(v, &field, platform.llc.colors, "colour")?));
        }
    }
    if let Some(t) = obj.table("banks")? {
        for (key, v) in t.map {
            let field = t.field(key);
            let partition = walk_partition(key, &field, platform)?;
            allocation.banks.push((partition, walk_index_list(v, &field, platform.dram.banks, "bank")?));
        }
    }
    Ok(allocation)
}
