//! The syntax of one `.thrift` file: a lexer and a recursive-descent
//! parser of the Thrift IDL (<https://thrift.apache.org/docs/idl>) that
//! keep only what the type table ([`super`]) needs.
//!
//! Why an own parser: `pilota-thrift-parser`, which did this before, brings
//! chumsky, nom and ariadne, and was the costliest crate of a cold build of
//! the workspace (about 4 minutes of CPU on 2 cores), for one file format
//! whose grammar fits on a page. This module is a few hundred lines that
//! compile in a second.
//!
//! What it reads: the headers (`include`, `cpp_include`, `namespace`), every
//! definition (`const` with its value, `typedef`, `enum` with or without
//! values, `struct`, `union`, `exception` with field ids, requiredness and
//! default values, `service` with `extends`, `oneway` and `throws`), base
//! types (`byte`/`i8` alike, `binary`, `uuid`), containers with an optional
//! `cpp_type`, annotations `( … )` wherever the compiler takes them (skipped),
//! comments (`//`, `#`, `/* */`), `,` or `;` between list items, strings in
//! either quotes. It keeps what reaches the wire: names, field ids,
//! requiredness and types. Namespaces, `cpp_include`s, constants and default
//! values are checked for their syntax and dropped. `senum` (deprecated
//! since Thrift 0.9) is refused.
//!
//! A mistake is a [`SyntaxError`]: line, column (both from 1, the column
//! in characters) and what was expected there.

use std::fmt;

/// What a struct-like type is declared as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Struct,
    Union,
    Exception,
}

/// A field's requiredness, as declared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Requiredness {
    Required,
    Optional,
    /// Neither (`default` requiredness).
    Default,
}

/// A `.thrift` file's definitions, in their order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Document {
    pub items: Vec<Item>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// `include "shared.thrift"`: the path as written.
    Include(String),
    Typedef {
        name: String,
        ty: Type,
    },
    Enum(Enum),
    /// A struct, union or exception.
    Struct(StructLike),
    Service(Service),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Enum {
    pub name: String,
    /// Each value with its number when one is written.
    pub values: Vec<(String, Option<i64>)>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct StructLike {
    pub kind: Kind,
    pub name: String,
    pub fields: Vec<Field>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// As written, or numbered -1, -2, … in its list when it has none, as
    /// the Thrift compiler numbers them.
    pub id: i64,
    pub requiredness: Requiredness,
    pub ty: Type,
    pub name: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Service {
    pub name: String,
    /// The service it extends, as written (`Base`, `shared.Base`).
    pub extends: Option<String>,
    pub functions: Vec<Function>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub name: String,
    pub oneway: bool,
    /// `None`: `void`.
    pub returns: Option<Type>,
    pub args: Vec<Field>,
    pub throws: Vec<Field>,
}

/// A type as written, unresolved.
#[derive(Clone, Debug, PartialEq)]
pub enum Type {
    Bool,
    /// `byte` or `i8`.
    I8,
    I16,
    I32,
    I64,
    Double,
    String,
    Binary,
    Uuid,
    List(Box<Type>),
    Set(Box<Type>),
    Map(Box<Type>, Box<Type>),
    /// A declared type, as written (`Item`, `shared.Money`).
    Named(String),
}

/// Where a file stops parsing and why; displayed `LINE:COLUMN: why`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

/// Parses one file's text.
pub fn parse(text: &str) -> Result<Document, SyntaxError> {
    let tokens = lex(text)?;
    Parser {
        tokens,
        at: 0,
        depth: 0,
    }
    .document()
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    /// A name, a keyword or a dotted name (`shared.Money`).
    Word(String),
    Int(i64),
    Double,
    Str(String),
    /// One of `{ } ( ) [ ] < > , ; : = *`.
    Punct(char),
    End,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Word(w) => write!(f, "`{w}`"),
            Tok::Int(n) => write!(f, "`{n}`"),
            Tok::Double => f.write_str("a number"),
            Tok::Str(s) => write!(f, "{s:?}"),
            Tok::Punct(c) => write!(f, "`{c}`"),
            Tok::End => f.write_str("end of input"),
        }
    }
}

struct Token {
    tok: Tok,
    line: usize,
    column: usize,
}

fn lex(text: &str) -> Result<Vec<Token>, SyntaxError> {
    let chars: Vec<char> = text.chars().collect();
    let (mut i, mut line, mut column) = (0, 1, 1);
    let mut tokens = Vec::new();
    // Moves past `n` characters, counting lines.
    let advance = |i: &mut usize, line: &mut usize, column: &mut usize, n: usize| {
        for _ in 0..n {
            if chars[*i] == '\n' {
                *line += 1;
                *column = 1;
            } else {
                *column += 1;
            }
            *i += 1;
        }
    };
    let error = |line, column, message: String| SyntaxError {
        line,
        column,
        message,
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c.is_whitespace() {
            advance(&mut i, &mut line, &mut column, 1);
        } else if c == '#' || (c == '/' && next == Some('/')) {
            while i < chars.len() && chars[i] != '\n' {
                advance(&mut i, &mut line, &mut column, 1);
            }
        } else if c == '/' && next == Some('*') {
            let (l, col) = (line, column);
            advance(&mut i, &mut line, &mut column, 2);
            loop {
                if i >= chars.len() {
                    return Err(error(l, col, "unterminated comment `/*`".into()));
                }
                if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    advance(&mut i, &mut line, &mut column, 2);
                    break;
                }
                advance(&mut i, &mut line, &mut column, 1);
            }
        } else if c == '"' || c == '\'' {
            let (l, col) = (line, column);
            advance(&mut i, &mut line, &mut column, 1);
            let mut s = String::new();
            loop {
                match chars.get(i) {
                    None => {
                        return Err(error(
                            l,
                            col,
                            format!("unterminated string (no closing {c})"),
                        ))
                    }
                    Some(&q) if q == c => break,
                    Some('\\') if i + 1 < chars.len() => {
                        s.push(match chars[i + 1] {
                            'n' => '\n',
                            't' => '\t',
                            'r' => '\r',
                            other => other,
                        });
                        advance(&mut i, &mut line, &mut column, 1);
                    }
                    Some(&other) => s.push(other),
                }
                advance(&mut i, &mut line, &mut column, 1);
            }
            advance(&mut i, &mut line, &mut column, 1);
            tokens.push(Token {
                tok: Tok::Str(s),
                line: l,
                column: col,
            });
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            let (l, col) = (line, column);
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == '.')
            {
                advance(&mut i, &mut line, &mut column, 1);
            }
            let word: String = chars[start..i].iter().collect();
            tokens.push(Token {
                tok: Tok::Word(word),
                line: l,
                column: col,
            });
        } else if c.is_ascii_digit()
            || ((c == '-' || c == '+') && next.is_some_and(|n| n.is_ascii_digit() || n == '.'))
            || (c == '.' && next.is_some_and(|n| n.is_ascii_digit()))
        {
            let start = i;
            let (l, col) = (line, column);
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric()
                    || chars[i] == '.'
                    || ((chars[i] == '-' || chars[i] == '+')
                        && (i == start || matches!(chars[i - 1], 'e' | 'E'))))
            {
                advance(&mut i, &mut line, &mut column, 1);
            }
            let text: String = chars[start..i].iter().collect();
            tokens.push(Token {
                tok: number(&text)
                    .ok_or_else(|| error(l, col, format!("`{text}` is no number")))?,
                line: l,
                column: col,
            });
        } else if "{}()[]<>,;:=*".contains(c) {
            tokens.push(Token {
                tok: Tok::Punct(c),
                line,
                column,
            });
            advance(&mut i, &mut line, &mut column, 1);
        } else {
            return Err(error(line, column, format!("unexpected character {c:?}")));
        }
    }
    tokens.push(Token {
        tok: Tok::End,
        line,
        column,
    });
    Ok(tokens)
}

/// An integer (decimal or `0x` hexadecimal, with a sign) or a double.
fn number(text: &str) -> Option<Tok> {
    let (negative, digits) = match text.as_bytes()[0] {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let magnitude = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        i64::from_str_radix(hex, 16).ok()
    } else if digits.bytes().all(|b| b.is_ascii_digit()) {
        digits.parse::<i64>().ok()
    } else {
        return text.parse::<f64>().ok().map(|_| Tok::Double);
    };
    magnitude.map(|n| Tok::Int(if negative { -n } else { n }))
}

/// Nesting (of types and constant values) deeper than this is refused
/// rather than risking the stack.
const MAX_DEPTH: usize = 64;

struct Parser {
    tokens: Vec<Token>,
    at: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> &Tok {
        &self.tokens[self.at].tok
    }

    fn peek_word(&self) -> Option<&str> {
        match self.peek() {
            Tok::Word(w) => Some(w),
            _ => None,
        }
    }

    fn bump(&mut self) -> Tok {
        let tok = self.tokens[self.at].tok.clone();
        if tok != Tok::End {
            self.at += 1;
        }
        tok
    }

    fn fail<T>(&self, expected: &str) -> Result<T, SyntaxError> {
        let token = &self.tokens[self.at];
        Err(SyntaxError {
            line: token.line,
            column: token.column,
            message: format!("expected {expected}, found {}", token.tok),
        })
    }

    fn eat_punct(&mut self, c: char) -> bool {
        if *self.peek() == Tok::Punct(c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect_punct(&mut self, c: char) -> Result<(), SyntaxError> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            self.fail(&format!("`{c}`"))
        }
    }

    fn eat_word(&mut self, word: &str) -> bool {
        if self.peek_word() == Some(word) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn name(&mut self, what: &str) -> Result<String, SyntaxError> {
        self.take_text(what, |tok| match tok {
            Tok::Word(w) => Some(w),
            _ => None,
        })
    }

    fn literal(&mut self, what: &str) -> Result<String, SyntaxError> {
        self.take_text(what, |tok| match tok {
            Tok::Str(s) => Some(s),
            _ => None,
        })
    }

    /// The next token's text where `text_of` finds one (consumed), or the
    /// error that `what` was expected there.
    fn take_text(
        &mut self,
        what: &str,
        text_of: impl FnOnce(&Tok) -> Option<&String>,
    ) -> Result<String, SyntaxError> {
        match text_of(self.peek()).cloned() {
            Some(text) => {
                self.at += 1;
                Ok(text)
            }
            None => self.fail(what),
        }
    }

    fn separator(&mut self) {
        let _ = self.eat_punct(',') || self.eat_punct(';');
    }

    fn deeper(&mut self) -> Result<(), SyntaxError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return self.fail(&format!("at most {MAX_DEPTH} levels of nesting"));
        }
        Ok(())
    }

    /// `( name = "value", … )` after a type, field, value or definition:
    /// the compiler's annotations, which never reach the wire.
    fn annotations(&mut self) -> Result<(), SyntaxError> {
        if !self.eat_punct('(') {
            return Ok(());
        }
        while !self.eat_punct(')') {
            self.name("an annotation's name or `)`")?;
            if self.eat_punct('=') {
                self.literal("an annotation's value (a string)")?;
            }
            self.separator();
        }
        Ok(())
    }

    fn document(mut self) -> Result<Document, SyntaxError> {
        let mut items = Vec::new();
        loop {
            let keyword = match self.peek() {
                Tok::End => return Ok(Document { items }),
                Tok::Word(w) => w.clone(),
                _ => return self.fail("a header or a definition"),
            };
            let (l, col) = (self.tokens[self.at].line, self.tokens[self.at].column);
            self.at += 1;
            match keyword.as_str() {
                "include" => {
                    items.push(Item::Include(self.literal("the included file (a string)")?))
                }
                "cpp_include" => {
                    self.literal("the C++ header (a string)")?;
                }
                "namespace" => {
                    if !self.eat_punct('*') {
                        self.name("a namespace scope (`*`, `java`, …)")?;
                    }
                    self.name("a namespace")?;
                    self.annotations()?;
                }
                "const" => {
                    self.ty()?;
                    self.name("the constant's name")?;
                    self.expect_punct('=')?;
                    self.value()?;
                }
                "typedef" => {
                    let ty = self.ty()?;
                    let name = self.name("the typedef's name")?;
                    self.annotations()?;
                    items.push(Item::Typedef { name, ty });
                }
                "enum" => items.push(Item::Enum(self.enumeration()?)),
                "struct" => items.push(Item::Struct(self.struct_like(Kind::Struct)?)),
                "union" => items.push(Item::Struct(self.struct_like(Kind::Union)?)),
                "exception" => items.push(Item::Struct(self.struct_like(Kind::Exception)?)),
                "service" => items.push(Item::Service(self.service()?)),
                "senum" => {
                    return Err(SyntaxError {
                        line: l,
                        column: col,
                        message: "`senum` (deprecated since Thrift 0.9) is not supported".into(),
                    })
                }
                _ => {
                    self.at -= 1;
                    return self.fail(
                        "a header or a definition (include, namespace, const, typedef, enum, struct, union, exception, service)",
                    );
                }
            }
            self.separator();
        }
    }

    fn enumeration(&mut self) -> Result<Enum, SyntaxError> {
        let name = self.name("the enum's name")?;
        self.expect_punct('{')?;
        let mut values = Vec::new();
        while !self.eat_punct('}') {
            let value = self.name("an enum value's name or `}`")?;
            let number = if self.eat_punct('=') {
                match *self.peek() {
                    Tok::Int(n) => {
                        self.at += 1;
                        Some(n)
                    }
                    _ => return self.fail("an integer"),
                }
            } else {
                None
            };
            self.annotations()?;
            self.separator();
            values.push((value, number));
        }
        self.annotations()?;
        Ok(Enum { name, values })
    }

    fn struct_like(&mut self, kind: Kind) -> Result<StructLike, SyntaxError> {
        let name = self.name("a name")?;
        self.eat_word("xsd_all");
        self.expect_punct('{')?;
        let fields = self.fields('}')?;
        self.annotations()?;
        Ok(StructLike { kind, name, fields })
    }

    /// Fields up to and including `close` (`}` of a struct, `)` of
    /// arguments and `throws`).
    fn fields(&mut self, close: char) -> Result<Vec<Field>, SyntaxError> {
        let mut fields = Vec::new();
        let mut implicit = 0;
        while !self.eat_punct(close) {
            let id = if let Tok::Int(n) = *self.peek() {
                self.at += 1;
                self.expect_punct(':')?;
                n
            } else {
                implicit -= 1;
                implicit
            };
            let requiredness = if self.eat_word("required") {
                Requiredness::Required
            } else if self.eat_word("optional") {
                Requiredness::Optional
            } else {
                Requiredness::Default
            };
            if self.peek_word().is_none() {
                return self.fail(&format!("a field or `{close}`"));
            }
            let ty = self.ty()?;
            let name = self.name("the field's name")?;
            if self.eat_punct('=') {
                self.value()?;
            }
            for xsd in ["xsd_optional", "xsd_nillable"] {
                self.eat_word(xsd);
            }
            if self.eat_word("xsd_attrs") {
                self.expect_punct('{')?;
                self.fields('}')?;
            }
            self.annotations()?;
            self.separator();
            fields.push(Field {
                id,
                requiredness,
                ty,
                name,
            });
        }
        Ok(fields)
    }

    fn service(&mut self) -> Result<Service, SyntaxError> {
        let name = self.name("the service's name")?;
        let extends = if self.eat_word("extends") {
            Some(self.name("the service it extends")?)
        } else {
            None
        };
        self.expect_punct('{')?;
        let mut functions = Vec::new();
        while !self.eat_punct('}') {
            let oneway = self.eat_word("oneway");
            let returns = if self.eat_word("void") {
                None
            } else if self.peek_word().is_some() {
                Some(self.ty()?)
            } else {
                return self.fail("a method or `}`");
            };
            let name = self.name("the method's name")?;
            self.expect_punct('(')?;
            let args = self.fields(')')?;
            let throws = if self.eat_word("throws") {
                self.expect_punct('(')?;
                self.fields(')')?
            } else {
                Vec::new()
            };
            self.annotations()?;
            self.separator();
            functions.push(Function {
                name,
                oneway,
                returns,
                args,
                throws,
            });
        }
        self.annotations()?;
        Ok(Service {
            name,
            extends,
            functions,
        })
    }

    /// A field type, with its annotations.
    fn ty(&mut self) -> Result<Type, SyntaxError> {
        self.deeper()?;
        let word = self.name("a type")?;
        let ty = match word.as_str() {
            "bool" => Type::Bool,
            "byte" | "i8" => Type::I8,
            "i16" => Type::I16,
            "i32" => Type::I32,
            "i64" => Type::I64,
            "double" => Type::Double,
            "string" => Type::String,
            "binary" => Type::Binary,
            "uuid" => Type::Uuid,
            // Thrift's grammar puts a container's `cpp_type` after a
            // list's element type but before a set's or a map's.
            "list" => {
                let element = self.element_type()?;
                self.cpp_type()?;
                Type::List(Box::new(element))
            }
            "set" => {
                self.cpp_type()?;
                Type::Set(Box::new(self.element_type()?))
            }
            "map" => {
                self.cpp_type()?;
                self.expect_punct('<')?;
                let key = self.ty()?;
                self.expect_punct(',')?;
                let value = self.ty()?;
                self.expect_punct('>')?;
                Type::Map(Box::new(key), Box::new(value))
            }
            "void" => {
                self.at -= 1;
                return self.fail("a type (`void` is only a method's return type)");
            }
            _ => Type::Named(word),
        };
        self.annotations()?;
        self.depth -= 1;
        Ok(ty)
    }

    /// A list's or a set's element type, `<T>`.
    fn element_type(&mut self) -> Result<Type, SyntaxError> {
        self.expect_punct('<')?;
        let element = self.ty()?;
        self.expect_punct('>')?;
        Ok(element)
    }

    fn cpp_type(&mut self) -> Result<(), SyntaxError> {
        if self.eat_word("cpp_type") {
            self.literal("the C++ type (a string)")?;
        }
        Ok(())
    }

    /// A constant value (of a `const` or a field's default), checked and
    /// dropped: nothing on the wire depends on it.
    fn value(&mut self) -> Result<(), SyntaxError> {
        self.deeper()?;
        if matches!(self.peek(), Tok::End | Tok::Punct(_))
            && ![Tok::Punct('['), Tok::Punct('{')].contains(self.peek())
        {
            return self.fail("a constant value");
        }
        match self.bump() {
            Tok::Int(_) | Tok::Double | Tok::Str(_) | Tok::Word(_) => {}
            Tok::Punct('[') => {
                while !self.eat_punct(']') {
                    self.value()?;
                    self.separator();
                }
            }
            Tok::Punct('{') => {
                while !self.eat_punct('}') {
                    self.value()?;
                    self.expect_punct(':')?;
                    self.value()?;
                    self.separator();
                }
            }
            _ => unreachable!("checked above"),
        }
        self.depth -= 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn named(name: &str) -> Type {
        Type::Named(name.to_owned())
    }

    fn field(id: i64, requiredness: Requiredness, ty: Type, name: &str) -> Field {
        Field {
            id,
            requiredness,
            ty,
            name: name.to_owned(),
        }
    }

    fn error(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn headers_give_includes_and_drop_the_rest() {
        let doc = parse(
            "include \"shared.thrift\"\ninclude 'dir/other.thrift';\ncpp_include \"<map>\"\n\
             namespace java com.example.shop\nnamespace * shop (a = \"b\")\nnamespace py.twisted shop\n",
        )
        .unwrap();
        assert_eq!(
            doc.items,
            [
                Item::Include("shared.thrift".into()),
                Item::Include("dir/other.thrift".into())
            ]
        );
    }

    #[test]
    fn constants_of_every_kind_are_checked_and_dropped() {
        let doc = parse(
            "const i32 A = 1\nconst i64 B = -0x1F;\nconst double C = 1.5e-3,\nconst string D = 'x'\n\
             const string E = \"y\\\"z\"\nconst Tier F = Tier.GOLD\nconst list<i32> G = [1, 2; 3 4]\n\
             const map<string, list<i32>> H = {\"a\": [1], 'b': []}\nconst set<string> I = []\n\
             const double J = +.5\ntypedef i32 After\n",
        )
        .unwrap();
        assert_eq!(
            doc.items,
            [Item::Typedef {
                name: "After".into(),
                ty: Type::I32
            }]
        );
        assert_eq!(
            error("const i32 A = \n"),
            "2:1: expected a constant value, found end of input"
        );
        assert_eq!(
            error("const map<i32,i32> A = {1 2}"),
            "1:27: expected `:`, found `2`"
        );
        assert_eq!(error("const i32 A 1"), "1:13: expected `=`, found `1`");
    }

    #[test]
    fn typedefs_and_every_base_and_container_type() {
        let doc = parse(
            "typedef bool A typedef byte B typedef i8 C typedef i16 D typedef i32 E typedef i64 F\n\
             typedef double G typedef string H typedef binary I typedef uuid J typedef shared.Money K\n\
             typedef list<i32> L typedef set<string> M typedef map<string, list<Item>> N\n\
             typedef list<i32> cpp_type \"std::vector<int>\" O typedef map cpp_type \"Map\" <i8, i16> P\n\
             typedef set cpp_type 'S' <i64> Q typedef i32 (x = \"y\") R (z = \"w\")\n",
        )
        .unwrap();
        let types: Vec<(&str, &Type)> = doc
            .items
            .iter()
            .map(|item| match item {
                Item::Typedef { name, ty } => (name.as_str(), ty),
                other => panic!("{other:?}"),
            })
            .collect();
        let list = |t| Type::List(Box::new(t));
        let expected = [
            ("A", Type::Bool),
            ("B", Type::I8),
            ("C", Type::I8),
            ("D", Type::I16),
            ("E", Type::I32),
            ("F", Type::I64),
            ("G", Type::Double),
            ("H", Type::String),
            ("I", Type::Binary),
            ("J", Type::Uuid),
            ("K", named("shared.Money")),
            ("L", list(Type::I32)),
            ("M", Type::Set(Box::new(Type::String))),
            (
                "N",
                Type::Map(Box::new(Type::String), Box::new(list(named("Item")))),
            ),
            ("O", list(Type::I32)),
            ("P", Type::Map(Box::new(Type::I8), Box::new(Type::I16))),
            ("Q", Type::Set(Box::new(Type::I64))),
            ("R", Type::I32),
        ];
        let expected: Vec<(&str, &Type)> = expected.iter().map(|(n, t)| (*n, t)).collect();
        assert_eq!(types, expected);
        assert_eq!(error("typedef list<i32 L"), "1:18: expected `>`, found `L`");
        assert_eq!(error("typedef map<i32> M"), "1:16: expected `,`, found `>`");
        assert_eq!(
            error("struct S { 1: void v }"),
            "1:15: expected a type (`void` is only a method's return type), found `void`"
        );
    }

    #[test]
    fn enums_with_and_without_values() {
        let doc = parse(
            "enum Tier { SILVER = 1, GOLD, PLATINUM = 0x10; LEAD = -2 (deprecated) IRON }\n\
             enum Empty {} (a.b = \"c\")\n",
        )
        .unwrap();
        assert_eq!(
            doc.items,
            [
                Item::Enum(Enum {
                    name: "Tier".into(),
                    values: vec![
                        ("SILVER".into(), Some(1)),
                        ("GOLD".into(), None),
                        ("PLATINUM".into(), Some(16)),
                        ("LEAD".into(), Some(-2)),
                        ("IRON".into(), None),
                    ],
                }),
                Item::Enum(Enum {
                    name: "Empty".into(),
                    values: vec![]
                }),
            ]
        );
        assert_eq!(
            error("enum E { A = B }"),
            "1:14: expected an integer, found `B`"
        );
        assert_eq!(
            error("enum E { A = 1"),
            "1:15: expected an enum value's name or `}`, found end of input"
        );
        assert_eq!(
            error("typedef i32 X\nsenum S { \"a\" }"),
            "2:1: `senum` (deprecated since Thrift 0.9) is not supported"
        );
    }

    #[test]
    fn structs_unions_and_exceptions_with_ids_requiredness_defaults_and_annotations() {
        let doc = parse(
            "/** An item. */\nstruct Item {\n  1: required string sku (go.tag = 'json:\"sku\"'),\n\
             2: optional i32 quantity = 1;\n  3: list<string> tags = [\"a\", \"b\"] # trailing\n\
             4: map<string,i32> counts = {\"x\": 1}\n  i64 noId\n  bool alsoNone = true,\n\
             -3: i16 negative\n} (final = \"true\")\n\
             union Choice xsd_all { 1: string a 2: i64 b }\nexception Oops { 1: string why }\n",
        )
        .unwrap();
        let [Item::Struct(item), Item::Struct(choice), Item::Struct(oops)] = &doc.items[..] else {
            panic!("{:?}", doc.items)
        };
        assert_eq!(item.kind, Kind::Struct);
        assert_eq!(item.name, "Item");
        assert_eq!(
            item.fields,
            [
                field(1, Requiredness::Required, Type::String, "sku"),
                field(2, Requiredness::Optional, Type::I32, "quantity"),
                field(
                    3,
                    Requiredness::Default,
                    Type::List(Box::new(Type::String)),
                    "tags"
                ),
                field(
                    4,
                    Requiredness::Default,
                    Type::Map(Box::new(Type::String), Box::new(Type::I32)),
                    "counts"
                ),
                field(-1, Requiredness::Default, Type::I64, "noId"),
                field(-2, Requiredness::Default, Type::Bool, "alsoNone"),
                field(-3, Requiredness::Default, Type::I16, "negative"),
            ]
        );
        assert_eq!(
            (choice.kind, choice.name.as_str(), choice.fields.len()),
            (Kind::Union, "Choice", 2)
        );
        assert_eq!((oops.kind, oops.name.as_str()), (Kind::Exception, "Oops"));
        assert_eq!(
            oops.fields,
            [field(1, Requiredness::Default, Type::String, "why")]
        );
        assert_eq!(
            error("struct S {\n  1 string a\n}"),
            "2:5: expected `:`, found `string`"
        );
        assert_eq!(
            error("struct S {\n  1: string\n}"),
            "3:1: expected the field's name, found `}`"
        );
        assert_eq!(
            error("struct S {\n  1: string a = \n}"),
            "3:1: expected a constant value, found `}`"
        );
        assert_eq!(
            error("struct S { 1: i32 a (x = 1) }"),
            "1:26: expected an annotation's value (a string), found `1`"
        );
        assert_eq!(error("struct {}"), "1:8: expected a name, found `{`");
        assert_eq!(
            error("struct S { 1: i32 a "),
            "1:21: expected a field or `}`, found end of input"
        );
    }

    #[test]
    fn services_with_extends_oneway_throws_and_annotations() {
        let doc = parse(
            "service Inventory extends shared.Health {\n\
             Reservation reserve(1: ReserveRequest req, 2: i32 n) throws (1: OutOfStock outOfStock),\n\
             oneway void forget(1: string requestId);\n  void empty() (priority = \"low\")\n\
             list<Item> all()\n} (a = \"b\")\nservice Plain {}\n",
        )
        .unwrap();
        let [Item::Service(inventory), Item::Service(plain)] = &doc.items[..] else {
            panic!("{:?}", doc.items)
        };
        assert_eq!(inventory.name, "Inventory");
        assert_eq!(inventory.extends.as_deref(), Some("shared.Health"));
        assert_eq!(
            inventory.functions,
            [
                Function {
                    name: "reserve".into(),
                    oneway: false,
                    returns: Some(named("Reservation")),
                    args: vec![
                        field(1, Requiredness::Default, named("ReserveRequest"), "req"),
                        field(2, Requiredness::Default, Type::I32, "n"),
                    ],
                    throws: vec![field(
                        1,
                        Requiredness::Default,
                        named("OutOfStock"),
                        "outOfStock"
                    )],
                },
                Function {
                    name: "forget".into(),
                    oneway: true,
                    returns: None,
                    args: vec![field(1, Requiredness::Default, Type::String, "requestId")],
                    throws: vec![]
                },
                Function {
                    name: "empty".into(),
                    oneway: false,
                    returns: None,
                    args: vec![],
                    throws: vec![]
                },
                Function {
                    name: "all".into(),
                    oneway: false,
                    returns: Some(Type::List(Box::new(named("Item")))),
                    args: vec![],
                    throws: vec![]
                },
            ]
        );
        assert_eq!(
            plain,
            &Service {
                name: "Plain".into(),
                extends: None,
                functions: vec![]
            }
        );
        assert_eq!(
            error("service S { void m( }"),
            "1:21: expected a field or `)`, found `}`"
        );
        assert_eq!(
            error("service S { void m() throws 1: E e) }"),
            "1:29: expected `(`, found `1`"
        );
        assert_eq!(
            error("service S extends { }"),
            "1:19: expected the service it extends, found `{`"
        );
        assert_eq!(
            error("service S { 1: void m() }"),
            "1:13: expected a method or `}`, found `1`"
        );
    }

    #[test]
    fn comments_of_three_kinds_and_both_quotes() {
        let doc = parse(
            "# hash\n// slashes\n/* block\n   over lines */ include /* inline */ 'a.thrift' // after\n\
             include \"b's.thrift\" # after\n/**/",
        )
        .unwrap();
        assert_eq!(
            doc.items,
            [
                Item::Include("a.thrift".into()),
                Item::Include("b's.thrift".into())
            ]
        );
        assert_eq!(parse("").unwrap(), Document::default());
        assert_eq!(error("/* never\nclosed"), "1:1: unterminated comment `/*`");
        assert_eq!(
            error("include\n  \"open"),
            "2:3: unterminated string (no closing \")"
        );
    }

    #[test]
    fn a_syntax_error_is_one_line_with_its_line_and_column() {
        assert_eq!(
            error("struct A {\n  1: i32 a,\n  2 i32 b\n}\n"),
            "3:5: expected `:`, found `i32`"
        );
        // As the Thrift compiler reads it: `c d` is a field `d` of type `c`
        // without an id (which the type table then refuses: no type `c`).
        let doc = parse("struct A {\n  1: i32 a,\n  2: i32 b c d\n}\n").unwrap();
        let Item::Struct(a) = &doc.items[0] else {
            panic!()
        };
        assert_eq!(
            a.fields[2],
            field(-1, Requiredness::Default, named("c"), "d")
        );
        assert_eq!(
            error("struct A {}\nstrukt B {}"),
            "2:1: expected a header or a definition (include, namespace, const, typedef, enum, struct, union, exception, service), found `strukt`"
        );
        assert_eq!(error("struct A {}\n  @"), "2:3: unexpected character '@'");
        assert_eq!(
            error("\tinclude 42"),
            // A tab is one column, as every character.
            "1:10: expected the included file (a string), found `42`"
        );
        assert_eq!(error("typedef i32 é"), "1:13: unexpected character 'é'");
        assert_eq!(
            error("const i32 A = 99999999999999999999"),
            "1:15: `99999999999999999999` is no number"
        );
        assert_eq!(
            error("{"),
            "1:1: expected a header or a definition, found `{`"
        );
        let deep = format!("typedef {}i32{} X", "list<".repeat(100), ">".repeat(100));
        assert!(error(&deep).contains("at most 64 levels of nesting"));
        for text in [
            "struct A {\n 1: i32 a b\n}",
            "service S {\n void m(\n}",
            "enum E { A = }",
        ] {
            assert!(!error(text).contains('\n'));
        }
    }

    // The property test: random structs and services printed as IDL (with
    // random separators, comments and annotations) parse back to
    // themselves.

    fn a_type() -> impl Strategy<Value = Type> {
        let leaf = prop_oneof![
            Just(Type::Bool),
            Just(Type::I8),
            Just(Type::I16),
            Just(Type::I32),
            Just(Type::I64),
            Just(Type::Double),
            Just(Type::String),
            Just(Type::Binary),
            Just(Type::Uuid),
            "[A-Z][A-Za-z0-9_]{0,6}(\\.[A-Z][A-Za-z0-9_]{0,6})?".prop_map(Type::Named),
        ];
        leaf.prop_recursive(3, 12, 2, |inner| {
            prop_oneof![
                inner.clone().prop_map(|t| Type::List(Box::new(t))),
                inner.clone().prop_map(|t| Type::Set(Box::new(t))),
                (inner.clone(), inner).prop_map(|(k, v)| Type::Map(Box::new(k), Box::new(v))),
            ]
        })
    }

    fn requiredness() -> impl Strategy<Value = Requiredness> {
        prop_oneof![
            Just(Requiredness::Required),
            Just(Requiredness::Optional),
            Just(Requiredness::Default)
        ]
    }

    /// Fields, some without an id (numbered -1, -2, … as the parser does).
    fn fields() -> impl Strategy<Value = Vec<Field>> {
        prop::collection::vec(
            (
                prop::option::of(1i64..=32767),
                requiredness(),
                a_type(),
                "[a-z][A-Za-z0-9_]{0,8}",
            ),
            0..6,
        )
        .prop_map(|fields| {
            let mut implicit = 0;
            fields
                .into_iter()
                .map(|(id, requiredness, ty, name)| Field {
                    id: id.unwrap_or_else(|| {
                        implicit -= 1;
                        implicit
                    }),
                    requiredness,
                    ty,
                    name: format!("f{name}"),
                })
                .collect()
        })
    }

    fn an_item() -> impl Strategy<Value = Item> {
        let kind = prop_oneof![Just(Kind::Struct), Just(Kind::Union), Just(Kind::Exception)];
        let function = (
            "[a-z][A-Za-z0-9_]{0,8}",
            any::<bool>(),
            prop::option::of(a_type()),
            fields(),
            fields(),
        )
            .prop_map(|(name, oneway, returns, args, throws)| Function {
                name: format!("m{name}"),
                oneway,
                returns,
                args,
                throws,
            });
        prop_oneof![
            (kind, "[A-Z][A-Za-z0-9_]{0,8}", fields())
                .prop_map(|(kind, name, fields)| Item::Struct(StructLike { kind, name, fields })),
            (
                "[A-Z][A-Za-z0-9_]{0,8}",
                prop::option::of("[A-Z][A-Za-z0-9_]{0,6}(\\.[A-Z][A-Za-z0-9_]{0,6})?"),
                prop::collection::vec(function, 0..4),
            )
                .prop_map(|(name, extends, functions)| Item::Service(Service {
                    name,
                    extends,
                    functions
                })),
            ("[A-Z][A-Za-z0-9_]{0,8}", a_type()).prop_map(|(name, ty)| Item::Typedef { name, ty }),
            (
                "[A-Z][A-Za-z0-9_]{0,8}",
                prop::collection::vec(
                    ("[A-Z][A-Z0-9_]{0,6}", prop::option::of(-100i64..100)),
                    0..5
                )
            )
                .prop_map(|(name, values)| Item::Enum(Enum { name, values })),
        ]
    }

    /// Prints a document as IDL; `noise` picks separators, comments,
    /// annotations, quotes and the implicit-id form, so every printing is
    /// a different text of the same document.
    struct Printer {
        noise: u64,
        out: String,
    }

    impl Printer {
        fn pick(&mut self, n: u64) -> u64 {
            self.noise ^= self.noise << 13;
            self.noise ^= self.noise >> 7;
            self.noise ^= self.noise << 17;
            self.noise % n
        }

        fn gap(&mut self) {
            let gap =
                ["", " ", "\n", " /* c */ ", " // c\n", " # c\n", "\t"][self.pick(7) as usize];
            self.out.push(' ');
            self.out.push_str(gap);
        }

        fn separator(&mut self) {
            let separator = [",", ";", ""][self.pick(3) as usize];
            self.out.push_str(separator);
            self.gap();
        }

        fn annotations(&mut self) {
            if self.pick(4) == 0 {
                self.out.push_str(" (a.b = \"c\", d, e = 'f')");
            }
        }

        fn ty(&mut self, ty: &Type) {
            let word = match ty {
                Type::Bool => "bool",
                Type::I8 => ["byte", "i8"][self.pick(2) as usize],
                Type::I16 => "i16",
                Type::I32 => "i32",
                Type::I64 => "i64",
                Type::Double => "double",
                Type::String => "string",
                Type::Binary => "binary",
                Type::Uuid => "uuid",
                Type::Named(name) => {
                    self.out.push_str(name);
                    return self.annotations();
                }
                Type::List(t) => {
                    self.out.push_str("list<");
                    self.ty(t);
                    self.out.push('>');
                    if self.pick(4) == 0 {
                        self.out.push_str(" cpp_type \"std::list<x>\"");
                    }
                    return self.annotations();
                }
                Type::Set(t) => {
                    self.out.push_str("set <");
                    self.ty(t);
                    self.out.push_str(" >");
                    return self.annotations();
                }
                Type::Map(k, v) => {
                    let open = if self.pick(4) == 0 {
                        "map cpp_type 'M' <"
                    } else {
                        "map<"
                    };
                    self.out.push_str(open);
                    self.ty(k);
                    self.out.push(',');
                    self.gap();
                    self.ty(v);
                    self.out.push('>');
                    return self.annotations();
                }
            };
            self.out.push_str(word);
            self.annotations();
        }

        fn fields(&mut self, fields: &[Field]) {
            for field in fields {
                if field.id > 0 {
                    self.out.push_str(&format!("{}:", field.id));
                    self.gap();
                }
                self.out.push_str(match field.requiredness {
                    Requiredness::Required => "required ",
                    Requiredness::Optional => "optional ",
                    Requiredness::Default => "",
                });
                self.ty(&field.ty);
                self.out.push(' ');
                self.out.push_str(&field.name);
                if self.pick(4) == 0 {
                    self.out.push_str(" = [1, 'x', {\"k\": 2.5}]");
                }
                self.annotations();
                self.separator();
            }
        }

        fn item(&mut self, item: &Item) {
            match item {
                Item::Include(path) => self.out.push_str(&format!("include \"{path}\"")),
                Item::Typedef { name, ty } => {
                    self.out.push_str("typedef ");
                    self.ty(ty);
                    self.out.push_str(&format!(" {name}"));
                }
                Item::Enum(e) => {
                    self.out.push_str(&format!("enum {} {{", e.name));
                    self.gap();
                    for (name, value) in &e.values {
                        self.out.push_str(name);
                        if let Some(value) = value {
                            self.out.push_str(&format!(" = {value}"));
                        }
                        self.annotations();
                        self.separator();
                    }
                    self.out.push('}');
                }
                Item::Struct(s) => {
                    let kind = match s.kind {
                        Kind::Struct => "struct",
                        Kind::Union => "union",
                        Kind::Exception => "exception",
                    };
                    self.out.push_str(&format!("{kind} {} {{", s.name));
                    self.gap();
                    self.fields(&s.fields);
                    self.out.push('}');
                }
                Item::Service(s) => {
                    self.out.push_str(&format!("service {}", s.name));
                    if let Some(base) = &s.extends {
                        self.out.push_str(&format!(" extends {base}"));
                    }
                    self.out.push_str(" {");
                    self.gap();
                    for function in &s.functions {
                        if function.oneway {
                            self.out.push_str("oneway ");
                        }
                        match &function.returns {
                            Some(ty) => self.ty(ty),
                            None => self.out.push_str("void"),
                        }
                        self.out.push_str(&format!(" {}(", function.name));
                        self.fields(&function.args);
                        self.out.push(')');
                        if !function.throws.is_empty() || self.pick(3) == 0 {
                            self.out.push_str(" throws (");
                            self.fields(&function.throws);
                            self.out.push(')');
                        }
                        self.annotations();
                        self.separator();
                    }
                    self.out.push('}');
                }
            }
            if !matches!(item, Item::Include(_)) {
                self.annotations();
            }
            self.separator();
        }
    }

    proptest! {
        #[test]
        fn printed_documents_parse_back_to_themselves(
            includes in prop::collection::vec("[a-z]{1,8}\\.thrift", 0..3),
            items in prop::collection::vec(an_item(), 0..8),
            noise in 1u64..,
        ) {
            let mut document = Document { items: includes.into_iter().map(Item::Include).collect() };
            document.items.extend(items);
            let mut printer = Printer { noise, out: String::new() };
            printer.out.push_str("namespace java a.b\n");
            for item in &document.items {
                printer.item(item);
                if printer.pick(3) == 0 {
                    printer.out.push_str("\nconst list<i32> K = [1, -2; 0x3]\n");
                }
            }
            let text = printer.out;
            let parsed = parse(&text).map_err(|e| TestCaseError::fail(format!("{e} in:\n{text}")))?;
            prop_assert_eq!(parsed, document, "{}", text);
        }
    }
}
