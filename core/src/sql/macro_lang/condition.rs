//! Conditions evaluated while a project loads (`@IF`, `@FILTER`, `@EVAL`, the clause macros):
//! literals, comparisons, arithmetic, `AND`/`OR`/`NOT`, `IS [NOT] NULL` and `IN`, with SQL's
//! NULL logic. Anything that needs the data (a column, a function) cannot be decided here and
//! is an error naming it.

use super::Value;
use sqlparser::ast::{BinaryOperator, Expr, InTarget, UnaryOperator, Value as SqlValue};
use sqlparser::dialect::DuckDbDialect;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, TokenWithSpan};

/// A value computed while loading.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// SQL NULL: unknown.
    Null,
    /// A boolean.
    Bool(bool),
    /// A number (compared and computed as a double, as SQLMesh's Python eval does for mixed
    /// arithmetic).
    Num(f64),
    /// A string.
    Str(String),
}

/// Whether `v` holds: a NULL or an unknown comparison is false, as in a SQL `WHERE`.
pub(super) fn truth(v: &Value) -> Result<bool, String> {
    Ok(match literal(v)? {
        Literal::Null => false,
        Literal::Bool(b) => b,
        Literal::Num(n) => n != 0.0,
        Literal::Str(s) => !s.is_empty(),
    })
}

/// `v` computed.
pub(super) fn literal(v: &Value) -> Result<Literal, String> {
    match v {
        Value::Null | Value::Nothing => Ok(Literal::Null),
        Value::Bool(b) => Ok(Literal::Bool(*b)),
        Value::Num(n) => n
            .parse()
            .map(Literal::Num)
            .map_err(|_| format!("`{n}` is not a number")),
        Value::Str(s) => Ok(Literal::Str(s.clone())),
        Value::List(_) | Value::Lambda(_) => Err("a list or a lambda is not a condition".into()),
        Value::Sql(tokens) => {
            let with_spans: Vec<TokenWithSpan> = tokens
                .iter()
                .cloned()
                .map(TokenWithSpan::wrap)
                .chain(std::iter::once(TokenWithSpan::wrap(Token::EOF)))
                .collect();
            let expr = Parser::new(&DuckDbDialect {})
                .with_tokens_with_locations(with_spans)
                .parse_expr()
                .map_err(|e| format!("cannot read the condition: {e}"))?;
            eval(&expr)
        }
    }
}

/// `e` computed, or why it cannot be.
pub fn eval(e: &Expr) -> Result<Literal, String> {
    use Literal::*;
    Ok(match e {
        Expr::Value(v) => match &v.value {
            SqlValue::Number(n, _) => {
                Num(n.parse().map_err(|_| format!("`{n}` is not a number"))?)
            }
            SqlValue::SingleQuotedString(s) | SqlValue::DoubleQuotedString(s) => Str(s.clone()),
            SqlValue::Boolean(b) => Bool(*b),
            SqlValue::Null => Null,
            other => return Err(format!("cannot evaluate `{other}` while loading")),
        },
        Expr::Nested(inner) => eval(inner)?,
        Expr::UnaryOp { op, expr } => match (op, eval(expr)?) {
            (UnaryOperator::Not, Bool(b)) => Bool(!b),
            (UnaryOperator::Not, Null) => Null,
            (UnaryOperator::Minus, Num(n)) => Num(-n),
            (UnaryOperator::Plus, Num(n)) => Num(n),
            (_, Null) => Null,
            (op, v) => return Err(format!("cannot apply `{op}` to {v:?}")),
        },
        Expr::IsNull(x) => Bool(eval(x)? == Null),
        Expr::IsNotNull(x) => Bool(eval(x)? != Null),
        Expr::IsTrue(x) => Bool(eval(x)? == Bool(true)),
        Expr::IsFalse(x) => Bool(eval(x)? == Bool(false)),
        Expr::IsNotTrue(x) => Bool(eval(x)? != Bool(true)),
        Expr::IsNotFalse(x) => Bool(eval(x)? != Bool(false)),
        Expr::In {
            expr,
            target: InTarget::List(list),
            negated,
            ..
        } => {
            let v = eval(expr)?;
            if v == Null {
                Null
            } else {
                let mut found = false;
                for item in list {
                    if compare(&v, &eval(item)?).is_some_and(|o| o.is_eq()) {
                        found = true;
                    }
                }
                Bool(found != *negated)
            }
        }
        Expr::BinaryOp { left, op, right } => binary(op, eval(left)?, eval(right)?)?,
        Expr::Identifier(i) => {
            return Err(format!(
                "`{}` is a column or an undefined variable, unknown while loading",
                i.value
            ))
        }
        other => return Err(format!("cannot evaluate `{other}` while loading")),
    })
}

fn compare(a: &Literal, b: &Literal) -> Option<std::cmp::Ordering> {
    use Literal::*;
    match (a, b) {
        (Num(x), Num(y)) => x.partial_cmp(y),
        (Str(x), Str(y)) => Some(x.cmp(y)),
        (Bool(x), Bool(y)) => Some(x.cmp(y)),
        // SQLMesh compares a number with a string as Python does: never equal
        _ => None,
    }
}

fn binary(op: &BinaryOperator, a: Literal, b: Literal) -> Result<Literal, String> {
    use BinaryOperator as B;
    use Literal::*;
    Ok(match op {
        B::And => match (&a, &b) {
            (Bool(false), _) | (_, Bool(false)) => Bool(false),
            (Null, _) | (_, Null) => Null,
            (Bool(true), Bool(true)) => Bool(true),
            _ => return Err("AND takes booleans".into()),
        },
        B::Or => match (&a, &b) {
            (Bool(true), _) | (_, Bool(true)) => Bool(true),
            (Null, _) | (_, Null) => Null,
            (Bool(false), Bool(false)) => Bool(false),
            _ => return Err("OR takes booleans".into()),
        },
        _ if a == Null || b == Null => Null,
        B::Eq => Bool(compare(&a, &b).is_some_and(|o| o.is_eq())),
        B::NotEq => Bool(!compare(&a, &b).is_some_and(|o| o.is_eq())),
        B::Lt | B::LtEq | B::Gt | B::GtEq => {
            let o = compare(&a, &b).ok_or_else(|| format!("cannot compare {a:?} with {b:?}"))?;
            Bool(match op {
                B::Lt => o.is_lt(),
                B::LtEq => o.is_le(),
                B::Gt => o.is_gt(),
                _ => o.is_ge(),
            })
        }
        B::Plus | B::Minus | B::Multiply | B::Divide | B::Modulo => match (a, b) {
            (Num(x), Num(y)) => Num(match op {
                B::Plus => x + y,
                B::Minus => x - y,
                B::Multiply => x * y,
                B::Divide if y == 0.0 => return Ok(Null),
                B::Divide => x / y,
                _ => x % y,
            }),
            (a, b) => return Err(format!("arithmetic on {a:?} and {b:?}")),
        },
        B::StringConcat => match (a, b) {
            (Str(x), Str(y)) => Str(x + &y),
            (a, b) => return Err(format!("`||` on {a:?} and {b:?}")),
        },
        other => return Err(format!("cannot evaluate `{other}` while loading")),
    })
}
