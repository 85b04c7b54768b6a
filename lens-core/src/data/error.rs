//! Errors reading data files.

use core::fmt;

/// A data file that could not be read, with where and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataError {
    /// What was being read (a file name or a data set name).
    pub source: String,
    /// The 1-based line, where the error is on one line.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl DataError {
    /// An error at `line` of `source`.
    #[must_use]
    pub fn at(source: &str, line: usize, message: impl Into<String>) -> Self {
        Self {
            source: source.to_owned(),
            line: Some(line),
            message: message.into(),
        }
    }

    /// An error about `source` as a whole.
    #[must_use]
    pub fn whole(source: &str, message: impl Into<String>) -> Self {
        Self {
            source: source.to_owned(),
            line: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for DataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}, line {line}: {}", self.source, self.message),
            None => write!(f, "{}: {}", self.source, self.message),
        }
    }
}

impl std::error::Error for DataError {}
