//! Where in which file something was written, so every diagnostic can point at it.

use serde::Serialize;

/// A 1-based line/column range inside one named file.
///
/// Columns count characters, as sqlparser and editors do; renderers that need byte offsets
/// convert with the file's text in hand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Location {
    /// The project-relative path of the file, as shown to the user.
    pub file: String,
    /// Line of the first character; 0 when the location names only the file.
    pub line: u64,
    /// Column of the first character; 0 when the location names only the file.
    pub column: u64,
    /// Line just past the range's last character.
    pub end_line: u64,
    /// Column just past the range's last character (exclusive).
    pub end_column: u64,
}

impl Location {
    /// A location covering `[start, end)` in `file`.
    pub fn new(file: impl Into<String>, start: (u64, u64), end: (u64, u64)) -> Self {
        let (line, column) = start;
        let (mut end_line, mut end_column) = end;
        if end_line < line || (end_line == line && end_column <= column) {
            end_line = line;
            end_column = column + 1;
        }
        Location {
            file: file.into(),
            line,
            column,
            end_line,
            end_column,
        }
    }

    /// A location naming a whole file, for problems that have no better anchor.
    pub fn file_only(file: impl Into<String>) -> Self {
        Location {
            file: file.into(),
            line: 0,
            column: 0,
            end_line: 0,
            end_column: 0,
        }
    }

    /// Whether this location points into the file's text (not just at the file).
    pub fn has_position(&self) -> bool {
        self.line > 0
    }

    /// Convert a sqlparser span into a location in `file`.
    #[cfg(feature = "analysis")]
    pub fn from_span(file: &str, span: sqlparser::tokenizer::Span) -> Self {
        if span.start.line == 0 {
            return Location::file_only(file);
        }
        Location::new(
            file,
            (span.start.line, span.start.column),
            (span.end.line, span.end.column),
        )
    }
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.has_position() {
            write!(f, "{}:{}:{}", self.file, self.line, self.column)
        } else {
            write!(f, "{}", self.file)
        }
    }
}
