//! Typed errors. Every input problem names the file, the field (a path such as
//! `task[3].period`) and the reason, so the CLI can print it on one line.
//! Values echoed from the input go through [`quote`]: escaped and cut, so a
//! message stays one line of bounded length whatever the input holds.

use thiserror::Error;

/// A problem with a task-system file: which file, which field, why.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{file}: {field}: {reason}")]
pub struct InputError {
    pub file: String,
    pub field: String,
    pub reason: String,
}

/// A field-level problem before the file name is attached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub reason: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, reason: impl Into<String>) -> Self {
        FieldError { field: field.into(), reason: reason.into() }
    }

    /// The error in `file`. Field and reason lose any line break left in them
    /// (every value is quoted already; this keeps the one-line promise).
    pub fn in_file(self, file: &str) -> InputError {
        InputError { file: escape(file), field: escape(&self.field), reason: escape(&self.reason) }
    }
}

pub type FieldResult<T> = Result<T, FieldError>;

/// Longest value an error quotes whole, in characters.
pub const QUOTE_CHARS: usize = 60;

/// `text` in double quotes for an error message: control characters, quotes
/// and backslashes escaped, and a value longer than [`QUOTE_CHARS`] cut with
/// an ellipsis and its length (`"aaaa…" (10485760 characters)`).
pub fn quote(text: &str) -> String {
    let n = text.chars().count();
    let mut out = String::from("\"");
    for c in text.chars().take(if n > QUOTE_CHARS { QUOTE_CHARS - 1 } else { n }) {
        push_escaped(&mut out, c, true);
    }
    if n > QUOTE_CHARS {
        out.push_str(&format!("…\" ({n} characters)"));
    } else {
        out.push('"');
    }
    out
}

/// A table key as one part of a field path: as written when it is plain
/// (printable, at most [`QUOTE_CHARS`] characters), else [`quote`]d.
pub fn key(text: &str) -> String {
    let plain = !text.is_empty() && text.chars().count() <= QUOTE_CHARS && !text.chars().any(breaks_line) && !text.contains(['"', '\\']);
    if plain {
        text.to_string()
    } else {
        quote(text)
    }
}

/// Up to five names, quoted, then how many more.
pub fn quote_list<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.into_iter().collect();
    let mut out: Vec<String> = names.iter().take(5).map(|n| quote(n)).collect();
    if names.len() > 5 {
        out.push(format!("and {} more", names.len() - 5));
    }
    out.join(", ")
}

/// Characters that would end or hide a line: control characters and the
/// Unicode line and paragraph separators (which Python's `splitlines` splits at).
pub fn breaks_line(c: char) -> bool {
    c.is_control() || c == '\u{2028}' || c == '\u{2029}'
}

/// `text` with every character that [`breaks_line`] escaped.
fn escape(text: &str) -> String {
    if !text.chars().any(breaks_line) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        push_escaped(&mut out, c, false);
    }
    out
}

fn push_escaped(out: &mut String, c: char, quoted: bool) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '"' | '\\' if quoted => {
            out.push('\\');
            out.push(c);
        }
        c if breaks_line(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        c => out.push(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_values_are_escaped_and_cut() {
        assert_eq!(quote("T0"), "\"T0\"");
        assert_eq!(quote("a\nb\t\"c\"\\"), r#""a\nb\t\"c\"\\""#);
        assert_eq!(quote("x\u{1b}y\u{2028}"), r#""x\u{1b}y\u{2028}""#);
        // 61 characters: 59 kept, then the ellipsis and the length.
        let long = "é".repeat(61);
        assert_eq!(quote(&long), format!("\"{}…\" (61 characters)", "é".repeat(59)));
        // Exactly 60 is kept whole.
        assert_eq!(quote(&"a".repeat(60)), format!("\"{}\"", "a".repeat(60)));
    }

    #[test]
    fn keys_stay_plain_unless_they_need_quoting() {
        assert_eq!(key("core0"), "core0");
        assert_eq!(key("a b"), "a b");
        assert_eq!(key("a\nb"), "\"a\\nb\"");
        assert_eq!(key(""), "\"\"");
        assert!(key(&"k".repeat(1000)).ends_with("(1000 characters)"));
    }

    #[test]
    fn an_input_error_never_holds_a_line_break() {
        let e = FieldError::new("task[0].a\nb", "why\r\nnot").in_file("f.toml");
        assert_eq!(e.to_string(), "f.toml: task[0].a\\nb: why\\r\\nnot");
    }

    #[test]
    fn name_lists_stop_after_five() {
        assert_eq!(quote_list(["a", "b"]), "\"a\", \"b\"");
        assert_eq!(quote_list(["1", "2", "3", "4", "5", "6", "7"]), "\"1\", \"2\", \"3\", \"4\", \"5\", and 2 more");
    }
}
