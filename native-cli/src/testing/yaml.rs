//! YAML with positions: a test file read into a small tree whose every node knows its line and
//! column, so each problem in a test points at the key that caused it.
//!
//! serde's YAML readers drop positions once a value is deserialized; yaml-rust2's event parser
//! keeps a marker per event, and this module folds those events into [`Node`]s. Plain scalars
//! are resolved with YAML 1.2's core schema (null, booleans, numbers), keeping a number's text
//! as written so `1.50` reaches SQL as `1.50`.

use std::collections::HashMap;
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// One YAML node and where it starts (1-based line and column).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    /// What the node holds.
    pub(crate) value: Value,
    /// Line of the node's first character.
    pub(crate) line: u64,
    /// Column of the node's first character.
    pub(crate) col: u64,
}

/// The content of a [`Node`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    /// A scalar as written; `plain` is false for quoted and block scalars, which are always
    /// strings.
    Scalar {
        /// The scalar's text, unescaped.
        text: String,
        /// Whether it was written without quotes (and so may be a null, boolean or number).
        plain: bool,
    },
    /// A sequence, in order.
    Seq(Vec<Node>),
    /// A mapping, keys in the order written.
    Map(Vec<(Node, Node)>),
}

/// A scalar resolved by YAML 1.2's core schema.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Scalar<'a> {
    /// `~`, `null` or nothing at all.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer or float, as SQL numeric literal text (`0x1F` becomes `31`).
    Number(String),
    /// Anything else, including every quoted scalar.
    Str(&'a str),
}

impl Node {
    /// The scalar's text, when the node is a scalar (keys, model names, dates).
    pub(crate) fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    /// The mapping's entries, when the node is a mapping.
    pub(crate) fn as_map(&self) -> Option<&[(Node, Node)]> {
        match &self.value {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    /// Whether the node is a null scalar (`~`, `null`, or a key with no value).
    pub(crate) fn is_null(&self) -> bool {
        matches!(self.scalar(), Some(Scalar::Null))
    }

    /// The scalar resolved to a type; `None` for sequences and mappings.
    pub(crate) fn scalar(&self) -> Option<Scalar<'_>> {
        let Value::Scalar { text, plain } = &self.value else {
            return None;
        };
        if !plain {
            return Some(Scalar::Str(text));
        }
        Some(match text.as_str() {
            "" | "~" | "null" | "Null" | "NULL" => Scalar::Null,
            "true" | "True" | "TRUE" => Scalar::Bool(true),
            "false" | "False" | "FALSE" => Scalar::Bool(false),
            t => match number(t) {
                Some(n) => Scalar::Number(n),
                None => Scalar::Str(text),
            },
        })
    }

    /// What kind of node this is, for messages ("a mapping", "a sequence", "a scalar").
    pub(crate) fn describe(&self) -> &'static str {
        match &self.value {
            Value::Scalar { .. } if self.is_null() => "nothing (null)",
            Value::Scalar { .. } => "a scalar",
            Value::Seq(_) => "a sequence",
            Value::Map(_) => "a mapping",
        }
    }

    /// The node as JSON, for nested fixture values (lists, structs).
    pub(crate) fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match &self.value {
            Value::Seq(items) => J::Array(items.iter().map(Node::to_json).collect()),
            Value::Map(entries) => J::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.as_str().unwrap_or_default().to_string(), v.to_json()))
                    .collect(),
            ),
            Value::Scalar { .. } => match self.scalar() {
                Some(Scalar::Null) | None => J::Null,
                Some(Scalar::Bool(b)) => J::Bool(b),
                Some(Scalar::Number(n)) => serde_json::from_str(&n).unwrap_or(J::String(n)),
                Some(Scalar::Str(s)) => J::String(s.to_string()),
            },
        }
    }
}

/// A YAML 1.2 core-schema number as SQL literal text, or `None` when `t` is not one.
fn number(t: &str) -> Option<String> {
    let (sign, digits) = match t.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", t.strip_prefix('+').unwrap_or(t)),
    };
    if let Some(hex) = t.strip_prefix("0x") {
        return u128::from_str_radix(hex, 16).ok().map(|n| n.to_string());
    }
    if let Some(oct) = t.strip_prefix("0o") {
        return u128::from_str_radix(oct, 8).ok().map(|n| n.to_string());
    }
    match digits {
        ".inf" | ".Inf" | ".INF" => return Some(format!("'{sign}inf'::DOUBLE")),
        ".nan" | ".NaN" | ".NAN" if sign.is_empty() => return Some("'nan'::DOUBLE".into()),
        _ => {}
    }
    // [0-9]+ | [0-9]* . [0-9]* with at least one digit, then an optional exponent
    let (mantissa, exponent) = match digits.find(['e', 'E']) {
        Some(i) => (&digits[..i], Some(&digits[i + 1..])),
        None => (digits, None),
    };
    let mut parts = mantissa.splitn(2, '.');
    let int = parts.next().unwrap_or_default();
    let frac = parts.next();
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = all_digits(int)
        && frac.is_none_or(all_digits)
        && (!int.is_empty() || frac.is_some_and(|f| !f.is_empty()));
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && all_digits(e)
    });
    if !(mantissa_ok && exponent_ok) {
        return None;
    }
    // SQL wants a digit before the point (`.5` → `0.5`) and none dangling after it (`1.` → `1.0`)
    let int = if int.is_empty() { "0" } else { int };
    let mut out = format!("{sign}{int}");
    if let Some(f) = frac {
        out.push('.');
        out.push_str(if f.is_empty() { "0" } else { f });
    }
    if let Some(e) = exponent {
        out.push('e');
        out.push_str(e);
    }
    Some(out)
}

/// A file that is not YAML, or holds more than one document.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SyntaxError {
    /// The parser's explanation.
    pub(crate) message: String,
    /// 1-based line of the problem.
    pub(crate) line: u64,
    /// 1-based column of the problem.
    pub(crate) col: u64,
}

/// Parse `text` (one YAML document) into a tree; `Ok(None)` for an empty file.
pub(crate) fn parse(text: &str) -> Result<Option<Node>, SyntaxError> {
    let mut b = Builder::default();
    let mut parser = Parser::new_from_str(text);
    parser.load(&mut b, true).map_err(|e| SyntaxError {
        message: e.info().to_string(),
        line: e.marker().line() as u64,
        col: e.marker().col() as u64 + 1,
    })?;
    if let Some(e) = b.error {
        return Err(e);
    }
    let mut docs = b.docs.into_iter();
    let first = docs.next();
    if let Some(second) = docs.next() {
        return Err(SyntaxError {
            message: "a test file holds one YAML document; found a second `---`".into(),
            line: second.line,
            col: second.col,
        });
    }
    Ok(first)
}

/// The most nodes a test file may expand to, aliases counted at their full size: a test's
/// fixtures are thousands of rows, not millions, and an alias bomb (`&a [*b, *b, ...]`)
/// stops here instead of at the machine's memory.
const MAX_NODES: usize = 1_000_000;
/// How deeply sequences and mappings may nest in a test file.
const MAX_DEPTH: usize = 64;

/// A sequence or mapping being read, with where it started and its anchor (0: none).
enum Frame {
    Seq(Vec<Node>, Marker, usize),
    Map(Vec<(Node, Node)>, Option<Node>, Marker, usize),
}

/// Folds parser events into nodes.
#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    /// Each anchored node with how many nodes it holds.
    anchors: HashMap<usize, (Node, usize)>,
    docs: Vec<Node>,
    error: Option<SyntaxError>,
    /// Nodes built so far, aliases counted at their size.
    nodes: usize,
}

/// How many nodes `n` holds, itself included.
fn size(n: &Node) -> usize {
    1 + match &n.value {
        Value::Scalar { .. } => 0,
        Value::Seq(items) => items.iter().map(size).sum(),
        Value::Map(entries) => entries.iter().map(|(k, v)| size(k) + size(v)).sum(),
    }
}

fn node(value: Value, mark: Marker) -> Node {
    Node {
        value,
        line: mark.line() as u64,
        col: mark.col() as u64 + 1,
    }
}

impl Builder {
    /// Put a finished node into its parent (or make it a document).
    fn add(&mut self, n: Node, anchor: usize) {
        if anchor > 0 {
            let held = size(&n);
            self.anchors.insert(anchor, (n.clone(), held));
        }
        match self.stack.last_mut() {
            None => self.docs.push(n),
            Some(Frame::Seq(items, ..)) => items.push(n),
            Some(Frame::Map(entries, key, ..)) => match key.take() {
                None => *key = Some(n),
                Some(k) => entries.push((k, n)),
            },
        }
    }
}

impl Builder {
    /// Count `more` nodes; past [`MAX_NODES`] (or [`MAX_DEPTH`]) record the error once.
    fn budget(&mut self, more: usize, mark: Marker) -> bool {
        self.nodes = self.nodes.saturating_add(more);
        let message = if self.nodes > MAX_NODES {
            format!("the file expands to more than {MAX_NODES} values (aliases count in full); split the test or drop the aliases")
        } else if self.stack.len() > MAX_DEPTH {
            format!("sequences and mappings nest deeper than {MAX_DEPTH} levels")
        } else {
            return true;
        };
        self.error.get_or_insert(SyntaxError {
            message,
            line: mark.line() as u64,
            col: mark.col() as u64 + 1,
        });
        false
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        // once over budget, nothing more is built
        if self.error.is_some() {
            return;
        }
        let more = match &ev {
            Event::Alias(id) => self.anchors.get(id).map_or(0, |(_, n)| *n),
            Event::Scalar(..) | Event::SequenceStart(..) | Event::MappingStart(..) => 1,
            _ => 0,
        };
        if !self.budget(more, mark) {
            return;
        }
        match ev {
            Event::Scalar(text, style, anchor, _tag) => {
                let plain = style == TScalarStyle::Plain;
                self.add(node(Value::Scalar { text, plain }, mark), anchor);
            }
            Event::SequenceStart(anchor, _) => self.stack.push(Frame::Seq(vec![], mark, anchor)),
            Event::MappingStart(anchor, _) => {
                self.stack.push(Frame::Map(vec![], None, mark, anchor))
            }
            Event::SequenceEnd | Event::MappingEnd => match self.stack.pop() {
                Some(Frame::Seq(items, start, anchor)) => {
                    self.add(node(Value::Seq(items), start), anchor)
                }
                Some(Frame::Map(entries, _, start, anchor)) => {
                    self.add(node(Value::Map(entries), start), anchor)
                }
                None => {}
            },
            Event::Alias(id) => match self.anchors.get(&id).map(|(n, _)| n.clone()) {
                Some(mut n) => {
                    n.line = mark.line() as u64;
                    n.col = mark.col() as u64 + 1;
                    self.add(n, 0);
                }
                None => {
                    self.error.get_or_insert(SyntaxError {
                        message: "alias to an unknown anchor".into(),
                        line: mark.line() as u64,
                        col: mark.col() as u64 + 1,
                    });
                }
            },
            Event::DocumentStart => self.anchors.clear(),
            Event::Nothing | Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key_at<'a>(n: &'a Node, k: &str) -> &'a (Node, Node) {
        n.as_map()
            .unwrap()
            .iter()
            .find(|(key, _)| key.as_str() == Some(k))
            .unwrap()
    }

    #[test]
    fn alias_bombs_and_deep_nesting_stop_with_a_position() {
        let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..9 {
            let refs = vec![format!("*a{}", i - 1); 10].join(", ");
            bomb.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
        }
        let e = parse(&bomb).unwrap_err();
        assert!(
            e.message.contains("more than 1000000 values"),
            "{}",
            e.message
        );
        assert!(e.line >= 6, "at the alias that went over: line {}", e.line);
        let deep = format!("a: {}x{}", "[".repeat(100), "]".repeat(100));
        let e = parse(&deep).unwrap_err();
        assert!(e.message.contains("deeper than 64"), "{}", e.message);
        // a file well inside the budget still parses
        assert!(parse("a: &a [1, 2]\nb: *a\n").unwrap().is_some());
    }

    #[test]
    fn every_node_knows_where_it_starts() {
        let text = "t1:\n  model: a.b\n  inputs:\n    x.y:\n      rows:\n        - id: 1\n          name: 'n'\n";
        let root = parse(text).unwrap().unwrap();
        let (k, t1) = key_at(&root, "t1");
        assert_eq!((k.line, k.col), (1, 1));
        let (k, inputs) = key_at(t1, "inputs");
        assert_eq!((k.line, k.col), (3, 3));
        let (k, x) = key_at(inputs, "x.y");
        assert_eq!((k.line, k.col), (4, 5));
        let (_, rows) = key_at(x, "rows");
        let Value::Seq(rows) = &rows.value else {
            panic!()
        };
        let (k, v) = key_at(&rows[0], "name");
        assert_eq!((k.line, k.col), (7, 11));
        assert_eq!(v.scalar(), Some(Scalar::Str("n")));
        assert_eq!(
            key_at(&rows[0], "id").1.scalar(),
            Some(Scalar::Number("1".into()))
        );
    }

    #[test]
    fn core_schema_scalars() {
        let root =
            parse("[~, null, true, False, 12, -1.5, .5, 1e3, 0x1F, '12', 2026-01-01, .inf, 1.2.3]")
                .unwrap()
                .unwrap();
        let Value::Seq(items) = &root.value else {
            panic!()
        };
        let got: Vec<_> = items.iter().map(|n| n.scalar().unwrap()).collect();
        assert_eq!(
            got,
            vec![
                Scalar::Null,
                Scalar::Null,
                Scalar::Bool(true),
                Scalar::Bool(false),
                Scalar::Number("12".into()),
                Scalar::Number("-1.5".into()),
                Scalar::Number("0.5".into()),
                Scalar::Number("1e3".into()),
                Scalar::Number("31".into()),
                Scalar::Str("12"),
                Scalar::Str("2026-01-01"),
                Scalar::Number("'inf'::DOUBLE".into()),
                Scalar::Str("1.2.3"),
            ]
        );
    }

    #[test]
    fn syntax_errors_have_a_position() {
        let e = parse("a:\n  b: [1, 2\nc: 3\n").unwrap_err();
        assert!(e.line >= 2, "{e:?}");
        assert!(parse("").unwrap().is_none());
        let e = parse("a: 1\n---\nb: 2\n").unwrap_err();
        assert_eq!(e.line, 3);
    }

    #[test]
    fn aliases_repeat_their_anchor() {
        let root = parse("a: &x {k: 1}\nb: *x\n").unwrap().unwrap();
        assert_eq!(key_at(&root, "b").1.to_json(), serde_json::json!({"k": 1}));
    }
}
