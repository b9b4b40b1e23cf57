//! SQLMesh's SQL macro language, expanded on the tokens of a model's query before it is parsed:
//! `@DEF` definitions, variables (`@name`, `@VAR('name')`, `@{name}` inside identifiers),
//! functions (`@EACH`, `@IF`, `@REDUCE`, `@FILTER`, `@SQL`, `@AND`, `@OR`, `@EVAL`,
//! `@SAFE_ADD`, `@SAFE_SUB`, `@SAFE_DIV`, `@GENERATE_SURROGATE_KEY`, and in [`query_macros`]
//! `@STAR`, `@PIVOT`, `@DEDUPLICATE`, `@DATE_SPINE`, `@HAVERSINE_DISTANCE`), clause macros
//! (`@WHERE(cond) ...` and its siblings) and the project's own macros (`@DEF(name, (a, b) ->
//! ...)` in `macros/*.sql`).
//!
//! Expansion happens before parsing because SQLMesh's syntax is not SQL (`@EACH([a, b], x ->
//! x)`) and because what it expands to is: the canonical form, and so the fingerprint, is the
//! expanded query, so changing a variable changes exactly the models that use it. Time macros
//! (`@start_ds`, ...) and `@this_model` are left for [`super::macros::fold_macros`], since their
//! values are only known when a batch is rendered.
//!
//! SQLMesh evaluates macros on sqlglot's AST with Python; here a macro value is a run of SQL
//! tokens, a literal, a list or a lambda, and conditions (`@IF`, `@FILTER`, `@EVAL`) are
//! evaluated by [`condition`] over literals, comparisons, arithmetic and boolean logic. What
//! cannot be evaluated while loading is an error at the call, never a guess.

pub(crate) mod args;
mod builtins;
mod condition;
mod query_macros;

use crate::diagnostic::{Diagnostic, Problem};
use crate::location::Location;
use crate::time::TIME_MACROS;
use sqlparser::tokenizer::{Span, Token, TokenWithSpan, Whitespace};
use std::borrow::Cow;
use std::collections::BTreeMap;

pub use condition::Literal;

/// What a macro expression stands for.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A run of SQL tokens: an expression, a column list, a clause.
    Sql(Vec<Token>),
    /// A string literal's contents.
    Str(String),
    /// A number as written.
    Num(String),
    /// `TRUE` or `FALSE`.
    Bool(bool),
    /// `NULL`.
    Null,
    /// Several values: an array literal, or what `@EACH` and `@FILTER` return. In SQL it is
    /// written as the items separated by commas.
    List(Vec<Value>),
    /// `x -> ...` or `(x, y) -> ...`.
    Lambda(Lambda),
    /// What `@IF` with a false condition and no else returns: nothing at all.
    Nothing,
}

/// An anonymous function: its parameters (lower-cased) and its unexpanded body.
#[derive(Debug, Clone, PartialEq)]
pub struct Lambda {
    /// The parameter names, lower-cased.
    pub params: Vec<String>,
    /// The body's tokens, expanded only when the lambda is applied.
    pub body: Vec<Token>,
}

/// What every model of a project can use: the configuration's `variables` and the macros
/// defined in `macros/*.sql`. Names are lower-cased, as SQLMesh's are.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MacroEnv {
    /// Global variables (`variables:` in `config.yaml`, `[variables]` in `efmesh.toml`).
    pub variables: BTreeMap<String, Value>,
    /// The project's macros: `@DEF(name, (a, b) -> body)` statements in `macros/*.sql`.
    pub macros: BTreeMap<String, Lambda>,
    /// The columns of each model (lower-cased `schema.table`), with their declared types when
    /// known, for `@STAR`. `None` while the project's columns are not known yet: `@STAR` then
    /// stands in as `table.*`, and the loader parses the files that use it again once they are.
    pub relations: Option<BTreeMap<String, RelationColumns>>,
    /// The `{% macro %}` files of `macros/`, concatenated, for Jinja queries.
    pub jinja_macros: String,
    /// The configuration's variables as written, for Jinja's `var()`.
    pub jinja_variables: BTreeMap<String, serde_json::Value>,
}

/// A relation's columns in order, each with its declared type when known.
pub type RelationColumns = Vec<(String, Option<String>)>;

impl MacroEnv {
    /// Whether nothing is defined (the common case: expansion can only meet built-ins).
    pub fn is_empty(&self) -> bool {
        self.variables.is_empty() && self.macros.is_empty()
    }
}

/// How deep macros may call macros before expansion stops (a recursive `@DEF`).
const MAX_DEPTH: usize = 64;

/// Expand every macro in `tokens` (the query after a MODEL block) except the time macros and
/// `@this_model`. `@DEF` statements are removed. `audit` leaves unknown `@name`s alone (they
/// are the audit's arguments).
pub fn expand<'t>(
    tokens: &'t [TokenWithSpan],
    env: &MacroEnv,
    file: &str,
    audit: bool,
) -> Result<Cow<'t, [TokenWithSpan]>, Vec<Diagnostic>> {
    if !needs_expansion(tokens) {
        return Ok(Cow::Borrowed(tokens));
    }
    let mut x = Expander {
        env,
        file,
        audit,
        locals: BTreeMap::new(),
        depth: 0,
    };
    let mut out = Vec::with_capacity(tokens.len());
    let mut errors = vec![];
    for stmt in args::split_top_level(tokens, |t| *t == Token::SemiColon, true) {
        match x.definition(stmt) {
            Ok(true) => continue,
            Ok(false) => {}
            Err(e) => {
                errors.push(e);
                continue;
            }
        }
        match x.expand_seq(stmt) {
            Ok(t) => out.extend(t),
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() {
        Ok(Cow::Owned(out))
    } else {
        Err(errors)
    }
}

/// `tokens` split into its statements at top-level semicolons (each keeps its `;`): how a
/// model file's pre- and post-statements are told apart from its query.
pub fn split_statements(tokens: &[TokenWithSpan]) -> Vec<&[TokenWithSpan]> {
    args::split_top_level(tokens, |t| *t == Token::SemiColon, true)
}

/// Whether `stmt` is an `@DEF(...)` statement, which defines a macro for the statements after
/// it instead of running.
pub fn is_definition(stmt: &[TokenWithSpan]) -> bool {
    let mut sig = stmt.iter().filter(|t| args::significant(&t.token));
    matches!(sig.next().map(|t| &t.token), Some(Token::AtSign))
        && matches!(sig.next().map(|t| &t.token), Some(Token::Word(w)) if w.value.eq_ignore_ascii_case("def"))
        && matches!(sig.next().map(|t| &t.token), Some(Token::LParen))
}

/// Expand the macros of a file's first statement (its MODEL or AUDIT block: `name
/// @{schema}.orders`, `start @VAR('start')`) and leave the rest as it is; the query's own
/// `@DEF`s are not visible there, as in SQLMesh.
pub fn expand_block<'t>(
    tokens: &'t [TokenWithSpan],
    env: &MacroEnv,
    file: &str,
) -> Result<Cow<'t, [TokenWithSpan]>, Vec<Diagnostic>> {
    let end = args::split_top_level(tokens, |t| *t == Token::SemiColon, true)
        .first()
        .map_or(0, |s| s.len());
    let (head, rest) = tokens.split_at(end);
    if !needs_expansion(head) {
        return Ok(Cow::Borrowed(tokens));
    }
    let mut x = Expander {
        env,
        file,
        audit: false,
        locals: BTreeMap::new(),
        depth: 0,
    };
    let mut out = x.expand_seq(head).map_err(|e| vec![e])?;
    out.extend_from_slice(rest);
    Ok(Cow::Owned(out))
}

/// Read the project's macro files: each holds `@DEF(name, (params) -> body);` statements.
pub fn parse_macro_file(
    file: &str,
    tokens: &[TokenWithSpan],
    env: &mut MacroEnv,
) -> Result<(), Vec<Diagnostic>> {
    if let Some(d) = super::jinja::refuse(file, tokens) {
        return Err(vec![d]);
    }
    let mut x = Expander {
        env: &MacroEnv::default(),
        file,
        audit: false,
        locals: BTreeMap::new(),
        depth: 0,
    };
    let mut errors = vec![];
    for stmt in args::split_top_level(tokens, |t| *t == Token::SemiColon, false) {
        if !stmt.iter().any(|t| args::significant(&t.token)) {
            continue;
        }
        match x.definition(stmt) {
            Ok(true) => {}
            Ok(false) => errors.push(x.error(
                "def",
                stmt,
                "a macro file holds only `@DEF(name, (a, b) -> ...);` statements".into(),
                "move other SQL into a model".into(),
            )),
            Err(e) => errors.push(e),
        }
    }
    for (name, value) in x.locals {
        match value {
            Value::Lambda(l) => {
                env.macros.insert(name, l);
            }
            other => {
                env.variables.insert(name, other);
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Whether any `@` in `tokens` is something other than a time macro or `@this_model`: only
/// then is there anything to expand (the hot path of a project without macros is one scan).
fn needs_expansion(tokens: &[TokenWithSpan]) -> bool {
    tokens.windows(2).any(|w| {
        w[0].token == Token::AtSign
            && match &w[1].token {
                Token::Word(word) => {
                    let n = word.value.to_ascii_lowercase();
                    !(TIME_MACROS.contains(&n.as_str()) || n == super::macros::THIS_MODEL)
                }
                Token::LBrace => true,
                _ => false,
            }
    })
}

/// One expansion: the project's definitions and the file's `@DEF`s so far.
struct Expander<'a> {
    env: &'a MacroEnv,
    file: &'a str,
    audit: bool,
    locals: BTreeMap<String, Value>,
    depth: usize,
}

impl Expander<'_> {
    fn error(&self, name: &str, at: &[TokenWithSpan], message: String, help: String) -> Diagnostic {
        Diagnostic::at(
            Problem::Macro {
                name: name.to_string(),
                message,
                help,
            },
            Location::from_span(self.file, span_of(at)),
        )
    }

    /// If `stmt` is `@DEF(name, value)`, bind it and say so.
    fn definition(&mut self, stmt: &[TokenWithSpan]) -> Result<bool, Diagnostic> {
        let sig: Vec<usize> = (0..stmt.len())
            .filter(|&i| args::significant(&stmt[i].token))
            .collect();
        let is_def = sig.len() >= 3
            && stmt[sig[0]].token == Token::AtSign
            && matches!(&stmt[sig[1]].token, Token::Word(w) if w.value.eq_ignore_ascii_case("def"))
            && stmt[sig[2]].token == Token::LParen;
        if !is_def {
            return Ok(false);
        }
        let open = sig[2];
        let close = args::matching(stmt, open).ok_or_else(|| {
            self.error(
                "DEF",
                stmt,
                "the call is not closed".into(),
                "add the missing `)`".into(),
            )
        })?;
        let list = args::split_args(&stmt[open + 1..close]);
        let [name, value] = list.as_slice() else {
            return Err(self.error(
                "DEF",
                stmt,
                format!("takes a name and a value, got {} argument(s)", list.len()),
                "write `@DEF(name, value);`".into(),
            ));
        };
        let name = match args::single_word(&name.tokens) {
            Some(n) => n.to_ascii_lowercase(),
            None => {
                return Err(self.error(
                    "DEF",
                    &name.tokens,
                    "the first argument must be a plain name".into(),
                    "write `@DEF(name, value);`".into(),
                ))
            }
        };
        let v = self.value_of(&value.tokens)?;
        self.locals.insert(name, v);
        Ok(true)
    }

    /// Expand every macro in `tokens`.
    fn expand_seq(&mut self, tokens: &[TokenWithSpan]) -> Result<Vec<TokenWithSpan>, Diagnostic> {
        let mut out: Vec<TokenWithSpan> = Vec::with_capacity(tokens.len());
        let mut i = 0;
        while i < tokens.len() {
            let t = &tokens[i];
            if t.token != Token::AtSign {
                out.push(t.clone());
                i += 1;
                continue;
            }
            match tokens.get(i + 1).map(|n| &n.token) {
                Some(Token::Word(w)) if w.quote_style.is_none() => {
                    let name = w.value.clone();
                    let lname = name.to_ascii_lowercase();
                    let at = &tokens[i..i + 2];
                    if tokens.get(i + 2).map(|n| &n.token) == Some(&Token::LParen) {
                        let close = args::matching(tokens, i + 2).ok_or_else(|| {
                            self.error(
                                &name,
                                at,
                                "the call is not closed".into(),
                                "add the missing `)`".into(),
                            )
                        })?;
                        let call = &tokens[i..=close];
                        let list = args::split_args(&tokens[i + 3..close]);
                        if let Some(clause) = builtins::clause_keyword(&lname) {
                            // `@WHERE(cond) a > 1`: the clause and what follows it, or nothing
                            let keep = self.condition_arg(&name, call, &list)?;
                            let end = args::clause_end(tokens, close + 1);
                            if keep {
                                out.extend(words(clause, t.span));
                                out.extend(self.expand_seq(&tokens[close + 1..end])?);
                            }
                            i = end;
                            continue;
                        }
                        let v = self.call(&name, call, list)?;
                        out.extend(self.render(&v, span_of(call), call)?);
                        i = close + 1;
                        continue;
                    }
                    if TIME_MACROS.contains(&lname.as_str()) || lname == super::macros::THIS_MODEL {
                        out.push(t.clone());
                        i += 1;
                        continue;
                    }
                    // in an audit a bare `@name` is one of its arguments, bound per call
                    match self.variable(&lname).filter(|_| !self.audit) {
                        Some(v) => {
                            let v = tuple_of_list(v);
                            out.extend(self.render(&v, span_of(at), at)?);
                            i += 2;
                        }
                        None => {
                            // left for fold_macros: an audit argument, or an unknown macro it
                            // reports with a suggestion
                            out.push(t.clone());
                            i += 1;
                        }
                    }
                }
                Some(Token::LBrace) => {
                    // `@{name}` inside an identifier: `col_@{x}` becomes one word
                    let close = args::matching(tokens, i + 1).ok_or_else(|| {
                        self.error(
                            "{",
                            &tokens[i..i + 2],
                            "`@{` is not closed".into(),
                            "write `@{name}`".into(),
                        )
                    })?;
                    let inner = &tokens[i + 2..close];
                    let name = args::single_word(inner).ok_or_else(|| {
                        self.error(
                            "{",
                            &tokens[i..=close],
                            "expected a variable name inside `@{...}`".into(),
                            "write `@{name}`".into(),
                        )
                    })?;
                    let v = self
                        .variable(&name.to_ascii_lowercase())
                        .ok_or_else(|| self.undefined(&name, &tokens[i..=close]))?;
                    let text = ident_text(&v);
                    let mut word = text;
                    let mut span = span_of(&tokens[i..=close]);
                    if let Some(TokenWithSpan {
                        token: Token::Word(prev),
                        span: ps,
                    }) = out.last()
                    {
                        if prev.quote_style.is_none() {
                            word = format!("{}{word}", prev.value);
                            span = ps.union(&span);
                            out.pop();
                        }
                    }
                    let mut j = close + 1;
                    if let Some(TokenWithSpan {
                        token: Token::Word(next),
                        span: ns,
                    }) = tokens.get(j)
                    {
                        if next.quote_style.is_none() {
                            word.push_str(&next.value);
                            span = span.union(ns);
                            j += 1;
                        }
                    }
                    out.push(TokenWithSpan::new(Token::make_word(&word, None), span));
                    i = j;
                }
                _ => {
                    out.push(t.clone());
                    i += 1;
                }
            }
        }
        Ok(out)
    }

    fn variable(&self, lname: &str) -> Option<Value> {
        self.locals
            .get(lname)
            .or_else(|| self.env.variables.get(lname))
            .cloned()
    }

    fn undefined(&self, name: &str, at: &[TokenWithSpan]) -> Diagnostic {
        let known: Vec<&str> = self
            .locals
            .keys()
            .chain(self.env.variables.keys())
            .map(String::as_str)
            .collect();
        let help = match crate::suggest::closest(&name.to_ascii_lowercase(), known) {
            Some(s) => format!("did you mean `{s}`?"),
            None => "define it with `@DEF(name, value);` before the query, or under `variables` in the project's config".into(),
        };
        self.error(name, at, "this variable is not defined".into(), help)
    }

    /// The value an argument stands for: a lambda, an array, a macro call's result, or its
    /// expanded tokens (classified as a literal when it is one).
    fn value_of(&mut self, tokens: &[TokenWithSpan]) -> Result<Value, Diagnostic> {
        let t = args::trim(tokens);
        if let Some(l) = args::lambda(t) {
            return Ok(Value::Lambda(l));
        }
        if let Some(items) = args::array_items(t) {
            let mut list = vec![];
            for item in items {
                list.push(self.value_of(item)?);
            }
            return Ok(Value::List(list));
        }
        // one macro call or one variable: its value as it is (a list stays a list)
        if t.len() >= 2 && t[0].token == Token::AtSign {
            if let Token::Word(w) = &t[1].token {
                let lname = w.value.to_ascii_lowercase();
                if t.len() == 2 {
                    if let Some(v) = self.variable(&lname) {
                        return Ok(v);
                    }
                } else if t[2].token == Token::LParen
                    && args::matching(t, 2) == Some(t.len() - 1)
                    && builtins::clause_keyword(&lname).is_none()
                {
                    let list = args::split_args(&t[3..t.len() - 1]);
                    return self.call(&w.value, t, list);
                }
            }
        }
        let expanded = self.expand_seq(t)?;
        Ok(classify(expanded.into_iter().map(|t| t.token).collect()))
    }

    /// The truth of a condition argument (`@IF`, the clause macros).
    fn condition_arg(
        &mut self,
        name: &str,
        call: &[TokenWithSpan],
        list: &[args::Arg],
    ) -> Result<bool, Diagnostic> {
        let Some(first) = list.first() else {
            return Err(self.error(
                name,
                call,
                "expects a condition".into(),
                format!("write `@{name}(condition)`"),
            ));
        };
        let v = self.value_of(&first.tokens)?;
        self.truth(name, &first.tokens, &v)
    }

    fn truth(&self, name: &str, at: &[TokenWithSpan], v: &Value) -> Result<bool, Diagnostic> {
        condition::truth(v).map_err(|m| {
            self.error(
                name,
                at,
                m,
                "a condition is evaluated while the project loads: use literals, variables, comparisons, arithmetic, AND/OR/NOT, IS [NOT] NULL and IN".into(),
            )
        })
    }

    /// Apply `l` to `args`: parameters are replaced where they are written bare, as `@x` or
    /// inside `@{x}`, then the body is expanded.
    fn apply(
        &mut self,
        l: &Lambda,
        values: &[Value],
        span: Span,
        at: &[TokenWithSpan],
    ) -> Result<Value, Diagnostic> {
        if values.len() != l.params.len() {
            return Err(self.error(
                "lambda",
                at,
                format!("takes {} argument(s), got {}", l.params.len(), values.len()),
                "pass one value per parameter".into(),
            ));
        }
        let bound: BTreeMap<&str, &Value> = l
            .params
            .iter()
            .map(String::as_str)
            .zip(values.iter())
            .collect();
        let body: Vec<TokenWithSpan> = l
            .body
            .iter()
            .map(|t| TokenWithSpan::new(t.clone(), span))
            .collect();
        let mut sub: Vec<TokenWithSpan> = Vec::with_capacity(body.len());
        let mut i = 0;
        while i < body.len() {
            let t = &body[i];
            // `@x` and `@{x}` of a parameter
            if t.token == Token::AtSign {
                if let Some(Token::Word(w)) = body.get(i + 1).map(|n| &n.token) {
                    if let Some(v) = bound.get(w.value.to_ascii_lowercase().as_str()) {
                        if body.get(i + 2).map(|n| &n.token) != Some(&Token::LParen) {
                            sub.extend(self.render(v, span, at)?);
                            i += 2;
                            continue;
                        }
                    }
                }
                if body.get(i + 1).map(|n| &n.token) == Some(&Token::LBrace) {
                    if let (Some(Token::Word(w)), Some(Token::RBrace)) = (
                        body.get(i + 2).map(|n| &n.token),
                        body.get(i + 3).map(|n| &n.token),
                    ) {
                        if let Some(v) = bound.get(w.value.to_ascii_lowercase().as_str()) {
                            let mut word = ident_text(v);
                            if let Some(TokenWithSpan {
                                token: Token::Word(prev),
                                ..
                            }) = sub.last()
                            {
                                if prev.quote_style.is_none() {
                                    word = format!("{}{word}", prev.value);
                                    sub.pop();
                                }
                            }
                            let mut j = i + 4;
                            if let Some(Token::Word(next)) = body.get(j).map(|n| &n.token) {
                                if next.quote_style.is_none() {
                                    word.push_str(&next.value);
                                    j += 1;
                                }
                            }
                            sub.push(TokenWithSpan::new(Token::make_word(&word, None), span));
                            i = j;
                            continue;
                        }
                    }
                }
            }
            // a bare parameter, not a qualified column's part (`t.x`) nor a function (`x(`)
            if let Token::Word(w) = &t.token {
                let after_dot = prev_significant(&sub).is_some_and(|p| *p == Token::Period);
                let before_paren = body.get(i + 1).map(|n| &n.token) == Some(&Token::LParen);
                if w.quote_style.is_none() && !after_dot && !before_paren {
                    if let Some(v) = bound.get(w.value.to_ascii_lowercase().as_str()) {
                        sub.extend(self.render(v, span, at)?);
                        i += 1;
                        continue;
                    }
                }
            }
            sub.push(t.clone());
            i += 1;
        }
        self.value_of(&sub)
    }

    /// Call macro `name` with `list`.
    fn call(
        &mut self,
        name: &str,
        call: &[TokenWithSpan],
        list: Vec<args::Arg>,
    ) -> Result<Value, Diagnostic> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            self.depth -= 1;
            return Err(self.error(
                name,
                call,
                format!("macros call each other more than {MAX_DEPTH} levels deep"),
                "a macro probably calls itself; break the cycle".into(),
            ));
        }
        let r = self.call_inner(name, call, list);
        self.depth -= 1;
        r
    }

    fn call_inner(
        &mut self,
        name: &str,
        call: &[TokenWithSpan],
        list: Vec<args::Arg>,
    ) -> Result<Value, Diagnostic> {
        let lname = name.to_ascii_lowercase();
        // the project's macros and the file's `@DEF` lambdas come before built-ins of the
        // same name, as in SQLMesh
        let user = match self.locals.get(&lname) {
            Some(Value::Lambda(l)) => Some(l.clone()),
            _ => self.env.macros.get(&lname).cloned(),
        };
        if let Some(l) = user {
            let bound = args::bind(self, name, call, &list, &l.params, l.params.len())?;
            let mut values = Vec::with_capacity(bound.len());
            for a in bound.into_iter().flatten() {
                values.push(self.value_of(&a.tokens)?);
            }
            return self.apply(&l, &values, span_of(call), call);
        }
        builtins::call(self, name, &lname, call, list)
    }

    /// `v` as tokens at `span`.
    fn render(
        &self,
        v: &Value,
        span: Span,
        at: &[TokenWithSpan],
    ) -> Result<Vec<TokenWithSpan>, Diagnostic> {
        let mut out = vec![];
        render_into(v, &mut out);
        if out
            .iter()
            .any(|t| matches!(t, Token::Placeholder(p) if p == LAMBDA_MARK))
        {
            return Err(self.error(
                "lambda",
                at,
                "a lambda is not a SQL value".into(),
                "pass it to a macro that applies it, such as @EACH".into(),
            ));
        }
        Ok(out
            .into_iter()
            .map(|t| TokenWithSpan::new(t, span))
            .collect())
    }
}

/// A token standing for a lambda where a SQL value was expected (reported by `render`).
const LAMBDA_MARK: &str = "\u{0}lambda";

/// A value written out as SQL tokens: how a macro's result, and a map variable's scalars
/// inside its struct literal, reach the query.
pub(crate) fn render_into(v: &Value, out: &mut Vec<Token>) {
    match v {
        Value::Sql(t) => out.extend(t.iter().cloned()),
        Value::Str(s) => out.push(Token::SingleQuotedString(s.clone())),
        Value::Num(n) => out.push(Token::Number(n.clone(), false)),
        Value::Bool(b) => out.push(Token::make_keyword(if *b { "TRUE" } else { "FALSE" })),
        Value::Null => out.push(Token::make_keyword("NULL")),
        Value::List(items) => {
            for (k, item) in items.iter().filter(|i| **i != Value::Nothing).enumerate() {
                if k > 0 {
                    out.push(Token::Comma);
                    out.push(Token::Whitespace(Whitespace::Space));
                }
                render_into(item, out);
            }
        }
        Value::Lambda(_) => out.push(Token::Placeholder(LAMBDA_MARK.into())),
        Value::Nothing => {}
    }
}

/// A variable holding a list is written as a tuple, `(a, b)`, as SQLMesh converts it.
fn tuple_of_list(v: Value) -> Value {
    match v {
        Value::List(items) => {
            let mut t = vec![Token::LParen];
            render_into(&Value::List(items), &mut t);
            t.push(Token::RParen);
            Value::Sql(t)
        }
        other => other,
    }
}

/// A value's text inside an identifier: a string without its quotes.
fn ident_text(v: &Value) -> String {
    match v {
        Value::Str(s) | Value::Num(s) => s.clone(),
        Value::Bool(b) => if *b { "TRUE" } else { "FALSE" }.into(),
        Value::Null => "NULL".into(),
        other => {
            let mut t = vec![];
            render_into(other, &mut t);
            t.iter()
                .map(|t| match t {
                    Token::Word(w) => w.value.clone(),
                    other => other.to_string(),
                })
                .collect()
        }
    }
}

/// Expanded tokens as a value: a lone literal is that literal.
fn classify(tokens: Vec<Token>) -> Value {
    let sig: Vec<&Token> = tokens.iter().filter(|t| args::significant(t)).collect();
    match sig.as_slice() {
        [] => Value::Nothing,
        [Token::SingleQuotedString(s)] => Value::Str(s.clone()),
        [Token::Number(n, _)] => Value::Num(n.clone()),
        [Token::Word(w)] if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("true") => {
            Value::Bool(true)
        }
        [Token::Word(w)] if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("false") => {
            Value::Bool(false)
        }
        [Token::Word(w)] if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("null") => {
            Value::Null
        }
        _ => Value::Sql(args::trim_tokens(tokens)),
    }
}

fn words(text: &str, span: Span) -> Vec<TokenWithSpan> {
    let mut out = vec![];
    for (k, w) in text.split(' ').enumerate() {
        if k > 0 {
            out.push(TokenWithSpan::new(
                Token::Whitespace(Whitespace::Space),
                span,
            ));
        }
        out.push(TokenWithSpan::new(Token::make_keyword(w), span));
    }
    out.push(TokenWithSpan::new(
        Token::Whitespace(Whitespace::Space),
        span,
    ));
    out
}

fn prev_significant(tokens: &[TokenWithSpan]) -> Option<&Token> {
    tokens
        .iter()
        .rev()
        .map(|t| &t.token)
        .find(|t| args::significant(t))
}

fn span_of(tokens: &[TokenWithSpan]) -> Span {
    let mut sig = tokens.iter().filter(|t| args::significant(&t.token));
    match (
        sig.next(),
        tokens.iter().rev().find(|t| args::significant(&t.token)),
    ) {
        (Some(a), Some(b)) => a.span.union(&b.span),
        _ => Span::empty(),
    }
}

#[cfg(test)]
mod tests;
