//! The user's `.thrift` IDL made a **type table**, once, before any load:
//! every file it includes parsed (paths relative to the including file,
//! as the Thrift compiler takes them), every typedef followed to its
//! type, every enum value numbered, every service's `extends` chain
//! flattened into its methods, and every named type resolved to an entry
//! of the table. The codec and the JSON mapping then look nothing up by
//! name.
//!
//! Each file is parsed by [`syntax`], this crate's own small parser of
//! the whole grammar (includes, namespaces, typedefs, constants, enums,
//! structs, unions, exceptions, services with `extends`, annotations),
//! which reports a syntax error with its line and column; it replaced
//! `pilota-thrift-parser`, the costliest crate of a cold build. It parses
//! one file at a time and resolves nothing; this module does the
//! resolving.
//!
//! Names: a type of the same file is named as written (`Item`), a type of
//! an included file by the file's name without `.thrift` (`shared.Money`),
//! as in the IDL; the table names each by that qualified form. Namespaces
//! (`namespace java …`) only name generated code and never reach the
//! wire, so they are read and ignored.

mod syntax;

use self::syntax as ast;
use crate::error_text::listed;
// Declared by the syntax, which the type table keeps as written.
pub use self::syntax::{Kind, Requiredness};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// A type, resolved.
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    Bool,
    /// `byte` or `i8`.
    I8,
    I16,
    I32,
    I64,
    Double,
    String,
    Binary,
    List(Box<Ty>),
    Set(Box<Ty>),
    Map(Box<Ty>, Box<Ty>),
    /// A struct, union or exception: its index in [`Schema::structs`].
    Struct(usize),
    /// An enum: its index in [`Schema::enums`].
    Enum(usize),
}

#[derive(Clone, Debug)]
pub struct Field {
    pub id: i16,
    pub name: String,
    pub ty: Ty,
    pub requiredness: Requiredness,
}

#[derive(Debug)]
pub struct Struct {
    /// Qualified as the IDL of the main file would name it (`Item`,
    /// `shared.Money`).
    pub name: String,
    pub kind: Kind,
    pub fields: Vec<Field>,
}

impl Struct {
    pub fn field_named(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// The fields of `set` (a struct value's, by id) with their
    /// definitions, in `set`'s order; an id the struct does not have is
    /// left out.
    pub fn set_fields<'a, V>(
        &'a self,
        set: &'a [(i16, V)],
    ) -> impl Iterator<Item = (&'a Field, &'a V)> + 'a {
        set.iter()
            .filter_map(|(id, v)| Some((self.fields.iter().find(|f| f.id == *id)?, v)))
    }

    pub fn field_names(&self) -> String {
        listed(self.fields.iter().map(|f| &f.name))
    }
}

#[derive(Debug)]
pub struct Enum {
    pub name: String,
    pub values: Vec<(String, i32)>,
}

impl Enum {
    pub fn name_of(&self, n: i32) -> Option<&str> {
        self.values
            .iter()
            .find(|(_, v)| *v == n)
            .map(|(name, _)| name.as_str())
    }

    pub fn number_of(&self, name: &str) -> Option<i32> {
        self.values.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    }

    pub fn names(&self) -> String {
        let names: Vec<&str> = self.values.iter().map(|(n, _)| n.as_str()).collect();
        names.join(", ")
    }
}

/// A method of a service (its own, or inherited through `extends`).
#[derive(Clone, Debug)]
pub struct Method {
    pub name: String,
    pub oneway: bool,
    /// The arguments: the fields of `<method>_args`.
    pub args: Vec<Field>,
    /// `None`: `void`.
    pub returns: Option<Ty>,
    /// The declared exceptions: fields of `<method>_result` after field 0.
    pub throws: Vec<Field>,
}

#[derive(Debug)]
pub struct Service {
    /// Qualified as [`Struct::name`].
    pub name: String,
    /// Inherited methods first, then its own.
    pub methods: Vec<Method>,
}

/// Every type and service of an IDL and the files it includes.
#[derive(Debug, Default)]
pub struct Schema {
    pub structs: Vec<Struct>,
    pub enums: Vec<Enum>,
    pub services: Vec<Service>,
}

impl Schema {
    /// The IDL in `path` and everything it includes. A file that cannot be
    /// read, a syntax error (`FILE:LINE:COLUMN: why`), an include that
    /// cannot be found or a type that is declared nowhere is one line.
    pub fn load(path: &Path) -> Result<Schema, String> {
        let mut files = Files::default();
        files.parse(path, None)?;
        Resolver::new(files).resolve()
    }

    /// The service named `name` (`Inventory`, or `shared.Health` for one of
    /// an included file), or a line listing those there are.
    pub fn service(&self, name: &str, idl: &Path) -> Result<&Service, String> {
        self.services
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(|| {
                format!(
                    "unknown service `{name}` in {} (its services: {})",
                    idl.display(),
                    listed(self.services.iter().map(|s| &s.name))
                )
            })
    }

    /// How a type is written in errors (`list<Item>`, `Tier`).
    pub fn type_name(&self, ty: &Ty) -> String {
        match ty {
            Ty::Bool => "bool".into(),
            Ty::I8 => "byte".into(),
            Ty::I16 => "i16".into(),
            Ty::I32 => "i32".into(),
            Ty::I64 => "i64".into(),
            Ty::Double => "double".into(),
            Ty::String => "string".into(),
            Ty::Binary => "binary".into(),
            Ty::List(t) => format!("list<{}>", self.type_name(t)),
            Ty::Set(t) => format!("set<{}>", self.type_name(t)),
            Ty::Map(k, v) => format!("map<{}, {}>", self.type_name(k), self.type_name(v)),
            Ty::Struct(i) => self.structs[*i].name.clone(),
            Ty::Enum(i) => self.enums[*i].name.clone(),
        }
    }
}

impl Service {
    /// The method named `name`, or a line listing those there are.
    pub fn method(&self, name: &str) -> Result<&Method, String> {
        self.methods.iter().find(|m| m.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.methods.iter().map(|m| m.name.as_str()).collect();
            format!(
                "service `{}` has no method `{name}` (its methods: {})",
                self.name,
                names.join(", ")
            )
        })
    }
}

/// Every file parsed, the main one first.
#[derive(Default)]
struct Files {
    parsed: Vec<Parsed>,
    by_path: HashMap<PathBuf, usize>,
}

struct Parsed {
    path: PathBuf,
    /// How the main file names this file's types: `""` for the main file,
    /// `"shared."` for `shared.thrift`.
    prefix: String,
    file: ast::Document,
    /// Include name (`shared`) to file index.
    includes: HashMap<String, usize>,
}

/// The name of an included file as its types are qualified: its file
/// name without the `.thrift`.
fn include_name(path: &str) -> String {
    let file = Path::new(path)
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    file.strip_suffix(".thrift").unwrap_or(&file).to_owned()
}

impl Files {
    fn parse(&mut self, path: &Path, prefix: Option<String>) -> Result<usize, String> {
        let key = path.canonicalize().unwrap_or_else(|_| path.to_owned());
        if let Some(&index) = self.by_path.get(&key) {
            return Ok(index);
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the IDL {}: {e}", path.display()))?;
        // `FILE:LINE:COLUMN: expected …, found …`
        let file = ast::parse(&text).map_err(|e| format!("{}:{e}", path.display()))?;
        let index = self.parsed.len();
        self.by_path.insert(key, index);
        self.parsed.push(Parsed {
            path: path.to_owned(),
            prefix: prefix.unwrap_or_default(),
            file,
            includes: HashMap::new(),
        });
        let includes: Vec<String> = self.parsed[index]
            .file
            .items
            .iter()
            .filter_map(|item| match item {
                ast::Item::Include(include) => Some(include.clone()),
                _ => None,
            })
            .collect();
        let dir = path.parent().unwrap_or(Path::new("."));
        for include in includes {
            let target = dir.join(&include);
            if !target.exists() {
                return Err(format!(
                    "{}: include \"{include}\" not found (looked for {})",
                    path.display(),
                    target.display()
                ));
            }
            let name = include_name(&include);
            let prefix = format!("{name}.");
            let included = self.parse(&target, Some(prefix))?;
            self.parsed[index].includes.insert(name, included);
        }
        Ok(index)
    }
}

/// Where a name is declared.
#[derive(Clone, Copy)]
enum Declared {
    Struct(usize),
    Enum(usize),
    /// A typedef: file and item index.
    Typedef(usize, usize),
    Service(usize, usize),
}

struct Resolver {
    files: Files,
    /// (file, name) to what it names.
    names: HashMap<(usize, String), Declared>,
    schema: Schema,
    /// The struct-likes to fill in: (file, item index), by struct index.
    struct_items: Vec<(usize, usize)>,
}

/// Typedefs that name typedefs deeper than this are taken for a cycle.
const MAX_TYPEDEF_DEPTH: usize = 64;

impl Resolver {
    fn new(files: Files) -> Resolver {
        Resolver {
            files,
            names: HashMap::new(),
            schema: Schema::default(),
            struct_items: Vec::new(),
        }
    }

    fn resolve(mut self) -> Result<Schema, String> {
        // First every name, so that types may refer to each other (and to
        // themselves) in any order.
        for (f, parsed) in self.files.parsed.iter().enumerate() {
            for (i, item) in parsed.file.items.iter().enumerate() {
                let (name, declared) = match item {
                    ast::Item::Struct(s) => (s.name.clone(), s.kind),
                    ast::Item::Enum(e) => {
                        let mut next = 0i64;
                        let mut values = Vec::new();
                        for (value, number) in &e.values {
                            let n = number.unwrap_or(next);
                            let n = i32::try_from(n).map_err(|_| {
                                format!(
                                    "{}: enum {}: value {value} = {n} does not fit in an i32",
                                    parsed.path.display(),
                                    e.name,
                                )
                            })?;
                            values.push((value.clone(), n));
                            next = i64::from(n) + 1;
                        }
                        let index = self.schema.enums.len();
                        self.schema.enums.push(Enum {
                            name: format!("{}{}", parsed.prefix, e.name),
                            values,
                        });
                        self.names
                            .insert((f, e.name.clone()), Declared::Enum(index));
                        continue;
                    }
                    ast::Item::Typedef { name, .. } => {
                        self.names
                            .insert((f, name.clone()), Declared::Typedef(f, i));
                        continue;
                    }
                    ast::Item::Service(s) => {
                        self.names
                            .insert((f, s.name.clone()), Declared::Service(f, i));
                        continue;
                    }
                    ast::Item::Include(_) => continue,
                };
                let index = self.schema.structs.len();
                self.schema.structs.push(Struct {
                    name: format!("{}{name}", parsed.prefix),
                    kind: declared,
                    fields: Vec::new(),
                });
                self.struct_items.push((f, i));
                self.names.insert((f, name), Declared::Struct(index));
            }
        }
        // Then the fields of every struct-like.
        for index in 0..self.struct_items.len() {
            let (f, i) = self.struct_items[index];
            let ast::Item::Struct(like) = &self.files.parsed[f].file.items[i] else {
                unreachable!("only struct-likes are listed")
            };
            let context = self.schema.structs[index].name.clone();
            let fields = self.fields(f, &like.fields, &context)?;
            self.schema.structs[index].fields = fields;
        }
        // Then the services, with what they extend.
        let mut done: BTreeMap<(usize, usize), usize> = BTreeMap::new();
        for f in 0..self.files.parsed.len() {
            for i in 0..self.files.parsed[f].file.items.len() {
                if matches!(self.files.parsed[f].file.items[i], ast::Item::Service(_)) {
                    self.service(f, i, &mut done, 0)?;
                }
            }
        }
        // The main file's services first, as the user names them.
        self.schema.services.sort_by_key(|s| s.name.contains('.'));
        Ok(self.schema)
    }

    fn service(
        &mut self,
        f: usize,
        i: usize,
        done: &mut BTreeMap<(usize, usize), usize>,
        depth: usize,
    ) -> Result<usize, String> {
        if let Some(&index) = done.get(&(f, i)) {
            return Ok(index);
        }
        let path = self.files.parsed[f].path.clone();
        if depth > MAX_TYPEDEF_DEPTH {
            return Err(format!(
                "{}: services extend each other in a cycle",
                path.display()
            ));
        }
        let ast::Item::Service(service) = &self.files.parsed[f].file.items[i] else {
            unreachable!("called for services only")
        };
        let name = format!("{}{}", self.files.parsed[f].prefix, service.name);
        let extends = service.extends.clone();
        let mut methods = Vec::new();
        if let Some(base) = extends {
            let (bf, base_name) = self.scope(f, &base, &name)?;
            match self.names.get(&(bf, base_name.clone())).copied() {
                Some(Declared::Service(sf, si)) => {
                    let index = self.service(sf, si, done, depth + 1)?;
                    methods.extend(self.schema.services[index].methods.iter().cloned());
                }
                _ => {
                    return Err(format!(
                        "{}: service {name} extends `{base}`, which is no service",
                        path.display(),
                    ))
                }
            }
        }
        let ast::Item::Service(service) = &self.files.parsed[f].file.items[i] else {
            unreachable!()
        };
        for function in service.functions.clone() {
            let context = format!("{name}.{}", function.name);
            let returns = match &function.returns {
                None => None,
                Some(ty) => Some(self.ty(f, ty, &context, 0)?),
            };
            methods.push(Method {
                args: self.fields(f, &function.args, &context)?,
                throws: self.fields(f, &function.throws, &format!("{context} throws"))?,
                name: function.name,
                oneway: function.oneway,
                returns,
            });
        }
        let index = self.schema.services.len();
        self.schema.services.push(Service { name, methods });
        done.insert((f, i), index);
        Ok(index)
    }

    fn fields(&self, f: usize, fields: &[ast::Field], context: &str) -> Result<Vec<Field>, String> {
        fields
            .iter()
            .map(|field| {
                let id = i16::try_from(field.id).map_err(|_| {
                    format!(
                        "{}: {context}.{}: field id {} does not fit in an i16",
                        self.files.parsed[f].path.display(),
                        field.name,
                        field.id
                    )
                })?;
                Ok(Field {
                    id,
                    name: field.name.clone(),
                    ty: self.ty(f, &field.ty, &format!("{context}.{}", field.name), 0)?,
                    requiredness: field.requiredness,
                })
            })
            .collect()
    }

    /// The file and the name a path refers to from file `f`: `Name` in
    /// `f`, `shared.Name` in the file `f` includes as `shared`.
    fn scope(&self, f: usize, path: &str, context: &str) -> Result<(usize, String), String> {
        let file = &self.files.parsed[f];
        let segments: Vec<&str> = path.split('.').collect();
        match &segments[..] {
            [name] => Ok((f, (*name).to_owned())),
            [include, name] => match file.includes.get(*include) {
                Some(&included) => Ok((included, (*name).to_owned())),
                None => Err(format!(
                    "{}: {context}: `{path}` names no included file (include \"{include}.thrift\")",
                    file.path.display(),
                )),
            },
            _ => Err(format!(
                "{}: {context}: cannot resolve `{path}`",
                file.path.display(),
            )),
        }
    }

    fn ty(&self, f: usize, ty: &ast::Type, context: &str, depth: usize) -> Result<Ty, String> {
        Ok(match ty {
            ast::Type::Bool => Ty::Bool,
            ast::Type::I8 => Ty::I8,
            ast::Type::I16 => Ty::I16,
            ast::Type::I32 => Ty::I32,
            ast::Type::I64 => Ty::I64,
            ast::Type::Double => Ty::Double,
            ast::Type::String => Ty::String,
            ast::Type::Binary => Ty::Binary,
            ast::Type::List(value) => Ty::List(Box::new(self.ty(f, value, context, depth)?)),
            ast::Type::Set(value) => Ty::Set(Box::new(self.ty(f, value, context, depth)?)),
            ast::Type::Map(key, value) => Ty::Map(
                Box::new(self.ty(f, key, context, depth)?),
                Box::new(self.ty(f, value, context, depth)?),
            ),
            ast::Type::Uuid => {
                return Err(format!(
                    "{}: {context}: type `uuid` (Thrift 0.21) is not supported yet",
                    self.files.parsed[f].path.display()
                ))
            }
            ast::Type::Named(path) => {
                let (tf, name) = self.scope(f, path, context)?;
                match self.names.get(&(tf, name)).copied() {
                    Some(Declared::Struct(i)) => Ty::Struct(i),
                    Some(Declared::Enum(i)) => Ty::Enum(i),
                    Some(Declared::Typedef(df, di)) => {
                        if depth >= MAX_TYPEDEF_DEPTH {
                            return Err(format!(
                                "{}: {context}: typedefs refer to each other in a cycle",
                                self.files.parsed[f].path.display()
                            ));
                        }
                        let ast::Item::Typedef { ty, .. } = &self.files.parsed[df].file.items[di]
                        else {
                            unreachable!("typedefs are listed as such")
                        };
                        self.ty(df, ty, context, depth + 1)?
                    }
                    Some(Declared::Service(..)) | None => {
                        return Err(format!(
                            "{}: {context}: unknown type `{path}`",
                            self.files.parsed[f].path.display(),
                        ))
                    }
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn repository() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    fn names<'a>(items: impl Iterator<Item = &'a String>) -> Vec<&'a str> {
        items.map(String::as_str).collect()
    }

    /// Every `.thrift` file of the repository parses and resolves; the
    /// contract's and the shop fixture's declare what they should.
    #[test]
    fn every_thrift_file_of_the_repository_loads() {
        let listed = Command::new("git")
            .args(["ls-files", "*.thrift"])
            .current_dir(repository())
            .output()
            .expect("git ls-files");
        assert!(listed.status.success(), "{listed:?}");
        let files: Vec<String> = String::from_utf8(listed.stdout)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        for expected in [
            "contract/bench.thrift",
            "fixtures/thrift-shop/idl/shop.thrift",
            "fixtures/thrift-shop/idl/shared.thrift",
        ] {
            assert!(
                files.iter().any(|f| f == expected),
                "{expected} not in {files:?}"
            );
        }
        for file in &files {
            let schema = Schema::load(&repository().join(file)).unwrap_or_else(|e| panic!("{e}"));
            let services = names(schema.services.iter().map(|s| &s.name));
            let structs = names(schema.structs.iter().map(|s| &s.name));
            let enums = names(schema.enums.iter().map(|e| &e.name));
            match file.as_str() {
                "contract/bench.thrift" => {
                    assert_eq!(services, ["Bench"]);
                    assert_eq!(structs, ["Order"]);
                    assert!(enums.is_empty());
                    let bench = &schema.services[0];
                    let methods = names(bench.methods.iter().map(|m| &m.name));
                    assert_eq!(
                        methods,
                        ["echoOrder", "echoOrders", "echoString", "hello", "empty"]
                    );
                    assert_eq!(bench.method("empty").unwrap().returns, None);
                    let order = &schema.structs[0];
                    assert_eq!(order.field_names(), "orderId, phone, name, orderNum, orderDate, ticketType, amount, orderStatus");
                    assert_eq!(order.field_named("amount").unwrap().ty, Ty::Double);
                    assert_eq!(order.field_named("orderStatus").unwrap().id, 8);
                }
                "fixtures/thrift-shop/idl/shop.thrift" => {
                    assert_eq!(services, ["Inventory", "shared.Health"]);
                    assert_eq!(
                        structs,
                        [
                            "Item",
                            "Customer",
                            "ReserveRequest",
                            "Line",
                            "Reservation",
                            "OutOfStock",
                            "shared.Money"
                        ]
                    );
                    assert_eq!(enums, ["Tier", "Status", "shared.Currency"]);
                    let kinds: Vec<Kind> = schema.structs.iter().map(|s| s.kind).collect();
                    assert_eq!(kinds[5], Kind::Exception);
                    let inventory = schema.service("Inventory", Path::new(file)).unwrap();
                    let forget = inventory.method("forget").unwrap();
                    assert!(forget.oneway);
                    let request = schema
                        .structs
                        .iter()
                        .find(|s| s.name == "ReserveRequest")
                        .unwrap();
                    for (field, type_name) in [
                        ("items", "list<Item>"),
                        ("tags", "set<string>"),
                        ("attributes", "map<string, string>"),
                    ] {
                        let ty = &request.field_named(field).unwrap().ty;
                        assert_eq!(schema.type_name(ty), type_name, "{field}");
                    }
                    assert_eq!(request.field_named("note").unwrap().ty, Ty::Binary);
                    let currency = schema
                        .enums
                        .iter()
                        .find(|e| e.name == "shared.Currency")
                        .unwrap();
                    assert_eq!(
                        currency.values,
                        [("EUR".to_owned(), 1), ("USD".to_owned(), 2)]
                    );
                }
                "fixtures/thrift-shop/idl/shared.thrift" => {
                    assert_eq!(services, ["Health"]);
                    assert_eq!(structs, ["Money"]);
                    assert_eq!(enums, ["Currency"]);
                }
                _ => {}
            }
        }
    }

    #[test]
    fn resolution_mistakes_are_one_line() {
        let dir = std::env::temp_dir().join(format!("rpclab-idl-resolve-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let load = |text: &str| {
            let file = dir.join("t.thrift");
            std::fs::write(&file, text).unwrap();
            let e = Schema::load(&file).unwrap_err();
            let prefix = format!("{}", file.display());
            assert!(e.starts_with(&prefix), "{e}");
            e[prefix.len()..].to_owned()
        };
        assert_eq!(
            load("struct S {\n  1: i32 a b\n}"),
            ":3:1: expected the field's name, found `}`"
        );
        assert_eq!(
            load("struct S {\n  1: i32 a b c\n}"),
            ": S.c: unknown type `b`"
        );
        assert_eq!(
            load("struct S { 1: Nowhere n }"),
            ": S.n: unknown type `Nowhere`"
        );
        assert_eq!(
            load("struct S { 1: other.T n }"),
            ": S.n: `other.T` names no included file (include \"other.thrift\")"
        );
        assert_eq!(
            load("struct S { 1: uuid u }"),
            ": S.u: type `uuid` (Thrift 0.21) is not supported yet"
        );
        assert_eq!(
            load("typedef A B typedef B A struct S { 1: A a }"),
            ": S.a: typedefs refer to each other in a cycle"
        );
        assert_eq!(
            load("struct S { 70000: i32 a }"),
            ": S.a: field id 70000 does not fit in an i16"
        );
        assert_eq!(
            load("enum E { A = 3000000000 }"),
            ": enum E: value A = 3000000000 does not fit in an i32"
        );
        assert_eq!(
            load("struct X {} service S extends X {}"),
            ": service S extends `X`, which is no service"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn ids_and_enum_values_follow_the_compiler() {
        let dir = std::env::temp_dir().join(format!("rpclab-idl-ids-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("ids.thrift");
        std::fs::write(
            &file,
            "enum E { A, B = 5, C }\nstruct S { i32 first, i32 second, 3: E e }\n\
             service Base { void b() }\nservice S2 extends Base { E m(1: S s) throws (1: X x) }\nexception X {}\n",
        )
        .unwrap();
        let schema = Schema::load(&file).unwrap();
        assert_eq!(
            schema.enums[0].values,
            [("A".into(), 0), ("B".into(), 5), ("C".into(), 6)]
        );
        let ids: Vec<i16> = schema.structs[0].fields.iter().map(|f| f.id).collect();
        assert_eq!(ids, [-1, -2, 3]);
        let s2 = schema.service("S2", &file).unwrap();
        assert_eq!(names(s2.methods.iter().map(|m| &m.name)), ["b", "m"]);
        assert_eq!(s2.methods[1].returns, Some(Ty::Enum(0)));
        assert_eq!(schema.type_name(&s2.methods[1].throws[0].ty), "X");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
