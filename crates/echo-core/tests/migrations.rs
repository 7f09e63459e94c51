//! The database is one file shared by several crates, and each keeps the migrations of the
//! tables it owns in its own `migrations/` folder; `echo_core::store::schema` runs them all as
//! one migrator. These checks keep that true: versions are unique across the folders, every
//! folder is part of the schema (and of the build script that watches them), every table a
//! migration creates is used by the crate whose folder holds it (or dropped later), and the
//! schema runs every file once, in version order, on a fresh database.

#[path = "support/tree.rs"]
mod tree;

use std::collections::BTreeMap;
use std::path::PathBuf;
use tree::{files_under, read, rel, report, root};

/// One migration file: its crate (folder under `crates/`), version and text.
struct MigrationFile {
    krate: String,
    path: PathBuf,
    version: i64,
    sql: String,
}

fn migration_files() -> Vec<MigrationFile> {
    let mut out = Vec::new();
    let crates = std::fs::read_dir(root().join("crates")).expect("crates/");
    for entry in crates {
        let dir = entry.expect("entry").path();
        let folder = dir.join("migrations");
        if !folder.is_dir() {
            continue;
        }
        let krate = dir
            .file_name()
            .expect("a crate folder")
            .to_string_lossy()
            .into_owned();
        for path in files_under(&folder, &|_| true, &["sql"]) {
            let name = path.file_name().expect("a file").to_string_lossy();
            let version = name
                .split('_')
                .next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{}: not VERSION_name.sql", rel(&path)));
            let sql = read(&path);
            out.push(MigrationFile {
                krate: krate.clone(),
                path,
                version,
                sql,
            });
        }
    }
    out.sort_by_key(|m| m.version);
    out
}

/// The tables `sql` creates (`verb` "create": `CREATE [VIRTUAL] TABLE [IF NOT EXISTS] name`)
/// or drops (`verb` "drop"), lower case.
fn tables(sql: &str, verb: &str) -> Vec<String> {
    let words: Vec<String> = sql
        .split(|c: char| c.is_whitespace() || c == '(' || c == ';')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let at = |j: usize, word: &str| words.get(j).is_some_and(|w| w == word);
    let mut out = Vec::new();
    for i in (0..words.len()).filter(|&i| at(i, verb)) {
        let mut j = i + 1;
        if at(j, "virtual") {
            j += 1;
        }
        if !at(j, "table") {
            continue;
        }
        j += 1;
        while at(j, "if") || at(j, "not") || at(j, "exists") {
            j += 1;
        }
        if let Some(name) = words.get(j) {
            out.push(name.trim_matches('"').to_string());
        }
    }
    out
}

#[test]
fn versions_are_unique_across_the_crates() {
    let mut seen: BTreeMap<i64, String> = BTreeMap::new();
    let mut problems = Vec::new();
    for m in migration_files() {
        if let Some(other) = seen.insert(m.version, rel(&m.path)) {
            problems.push(format!(
                "{} and {other} share version {}",
                rel(&m.path),
                m.version
            ));
        }
    }
    report("migration versions used twice", problems);
}

#[test]
fn every_migrations_folder_is_part_of_the_schema() {
    let store = read(&root().join("crates/echo-core/src/store.rs"));
    let build = read(&root().join("crates/echo-core/build.rs"));
    let mut problems = Vec::new();
    let mut crates: Vec<String> = migration_files().into_iter().map(|m| m.krate).collect();
    crates.sort();
    crates.dedup();
    for krate in crates {
        let folder = if krate == "echo-core" {
            "./migrations".to_string()
        } else {
            format!("../{krate}/migrations")
        };
        if !store.contains(&format!("sqlx::migrate!(\"{folder}\")")) {
            problems.push(format!(
                "crates/{krate}/migrations is not in echo-core's MIGRATIONS (src/store.rs)"
            ));
        }
        let watched = folder.trim_start_matches("./");
        if !build.contains(&format!("\"{watched}\"")) {
            problems.push(format!(
                "crates/{krate}/migrations is not watched by crates/echo-core/build.rs"
            ));
        }
    }
    report("migration folders the schema leaves out", problems);
}

#[test]
fn a_migration_lives_with_the_crate_that_owns_its_tables() {
    let files = migration_files();
    // A table made to rebuild another (a CHECK changed) is renamed to it: that is a drop too.
    let dropped: Vec<String> = files
        .iter()
        .flat_map(|m| [tables(&m.sql, "drop"), renamed(&m.sql)].concat())
        .collect();
    let mut sources: BTreeMap<String, String> = BTreeMap::new();
    let mut problems = Vec::new();
    for m in &files {
        let code = sources.entry(m.krate.clone()).or_insert_with(|| {
            let src = root().join("crates").join(&m.krate).join("src");
            files_under(&src, &|_| false, &["rs"])
                .iter()
                .map(|p| read(p))
                .collect::<Vec<_>>()
                .join("\n")
        });
        for table in tables(&m.sql, "create") {
            let used = code
                .match_indices(&table)
                .any(|(at, _)| is_word_at(code, at, table.len()));
            if !used && !dropped.contains(&table) {
                problems.push(format!(
                    "{} creates `{table}`, which crates/{}/src never uses: move the migration to \
                     the crate that owns the table",
                    rel(&m.path),
                    m.krate
                ));
            }
        }
    }
    report("migrations away from their tables", problems);
}

/// The tables `sql` renames (`ALTER TABLE name RENAME TO other`), lower case.
fn renamed(sql: &str) -> Vec<String> {
    let words: Vec<String> = sql
        .split(|c: char| c.is_whitespace() || c == ';')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    words
        .windows(5)
        .filter(|w| w[0] == "alter" && w[1] == "table" && w[3] == "rename" && w[4] == "to")
        .map(|w| w[2].trim_matches('"').to_string())
        .collect()
}

fn is_word_at(text: &str, at: usize, len: usize) -> bool {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    !text[..at].chars().next_back().is_some_and(word)
        && !text[at + len..].chars().next().is_some_and(word)
}

#[test]
fn the_schema_runs_every_file_once_in_version_order() {
    let files = migration_files();
    let schema = echo_core::store::schema();
    let versions: Vec<i64> = schema.iter().map(|m| m.version).collect();
    let want: Vec<i64> = files.iter().map(|m| m.version).collect();
    assert_eq!(
        versions, want,
        "the schema's migrations are the files', in order"
    );
}

#[tokio::test]
async fn a_fresh_database_gets_every_crates_tables() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = echo_core::Store::open_in(dir.path()).await.expect("open");
    for table in ["sessions", "memories", "approval_rules", "automations"] {
        let found: Option<(String,)> =
            sqlx::query_as("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?")
                .bind(table)
                .fetch_optional(store.pool())
                .await
                .expect("query");
        assert!(found.is_some(), "{table} was created");
    }
    store.close().await;
}

#[test]
fn the_table_reader_finds_what_it_should() {
    let sql = "CREATE TABLE a (x INT);\nCREATE VIRTUAL TABLE b USING vt (y);\n\
               CREATE TABLE IF NOT EXISTS c(z);\nDROP TABLE d;\nCREATE INDEX e ON a (x);";
    assert_eq!(tables(sql, "create"), ["a", "b", "c"]);
    assert_eq!(tables(sql, "drop"), ["d"]);
    assert_eq!(renamed("ALTER TABLE a_new RENAME TO a;"), ["a_new"]);
    assert!(is_word_at("from memories where", 5, 8));
    assert!(!is_word_at("from memories_log where", 5, 8));
}

/// 0022 rebuilds `memories` (its `source` may now be `imported`). An upgraded database keeps
/// every memory and every row that refers to one (`memory_reads` cascades on delete: the
/// rebuild must not set it off), its foreign keys are enforced again afterwards, and the
/// change log's triggers fire on the new table.
#[tokio::test]
async fn rebuilding_memories_keeps_them_and_their_reads() {
    use sqlx::sqlite::SqliteConnectOptions;
    use sqlx::{ConnectOptions, Connection};
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("echo.db");
    let before: Vec<_> = echo_core::store::schema()
        .iter()
        .filter(|m| m.version < 22)
        .cloned()
        .collect();
    let options = SqliteConnectOptions::new()
        .filename(&path)
        .create_if_missing(true)
        .foreign_keys(true);
    let mut conn = options.connect().await.expect("connect");
    sqlx::migrate::Migrator::with_migrations(before)
        .run(&mut conn)
        .await
        .expect("migrations up to 0021");
    for sql in [
        "INSERT INTO memories (id, tier, kind, content, source, confidence, importance, stability,
            created_at, updated_at, status, scope)
         VALUES ('m1', 'semantic', 'fact', 'The user is vegetarian', 'user_stated', 0.9, 0.7, 30,
            '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', 'active', 'global')",
        "INSERT INTO memory_reads (memory_id, turn_id, how, at)
         VALUES ('m1', 't1', 'snapshot', '2026-01-02T00:00:00Z')",
    ] {
        sqlx::query(sql).execute(&mut conn).await.expect("old rows");
    }
    let imported = "INSERT INTO memories (id, tier, kind, content, source, confidence, importance,
            stability, created_at, updated_at, status, scope)
         VALUES ('m2', 'semantic', 'fact', 'The user lives in Lyon', 'imported', 0.9, 0.7, 30,
            '2026-01-03T00:00:00Z', '2026-01-03T00:00:00Z', 'active', 'global')";
    assert!(
        sqlx::query(imported).execute(&mut conn).await.is_err(),
        "before 0022, `imported` is refused"
    );
    conn.close().await.expect("close");

    let store = echo_core::Store::open(&path).await.expect("upgrade");
    let pool = store.pool();
    let count = |sql: &'static str| async move {
        sqlx::query_scalar::<_, i64>(sql)
            .fetch_one(pool)
            .await
            .expect(sql)
    };
    assert_eq!(
        count("SELECT COUNT(*) FROM memories WHERE id = 'm1'").await,
        1
    );
    assert_eq!(
        count("SELECT COUNT(*) FROM memory_reads WHERE memory_id = 'm1'").await,
        1
    );
    assert_eq!(
        count("PRAGMA foreign_keys").await,
        1,
        "foreign keys are on again"
    );
    let changes = count("SELECT COUNT(*) FROM memory_changes").await;
    sqlx::query(imported)
        .execute(pool)
        .await
        .expect("`imported` is a source now");
    assert_eq!(
        count("SELECT COUNT(*) FROM memory_changes").await,
        changes + 1,
        "the insert trigger fires on the rebuilt table"
    );
    sqlx::query("DELETE FROM memories WHERE id = 'm1'")
        .execute(pool)
        .await
        .expect("delete");
    assert_eq!(
        count("SELECT COUNT(*) FROM memory_reads").await,
        0,
        "a memory's reads still go with it"
    );
    store.close().await;
}
