//! Typed errors. Every input problem names the file, the field (a path such as
//! `task[3].period`) and the reason, so the CLI can print it on one line.

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

    pub fn in_file(self, file: &str) -> InputError {
        InputError { file: file.to_string(), field: self.field, reason: self.reason }
    }
}

pub type FieldResult<T> = Result<T, FieldError>;
