//! `echod projects …`: projects keep work apart (their conversations recall their own
//! memories and the global ones, never another project's). Each command sends its
//! operation's request through `Api::call`.

use crate::print::{self, Text};
use clap::Subcommand;
use echo_agent::Api;
use echo_agent::wire::{
    AddProject, EditProject, ListProjects, Project, ProjectMemories, ProjectRemoved, RemoveProject,
};
use std::io::Write;
use std::path::PathBuf;

#[derive(Debug, Subcommand)]
pub enum ProjectsCommand {
    /// Add a project.
    Add {
        /// Its name.
        name: String,
        /// A folder its conversations work in (the tools' workspace); repeat for more.
        #[arg(long = "folder", value_name = "DIR")]
        folders: Vec<PathBuf>,
        /// Standing instructions for its conversations.
        #[arg(long)]
        instructions: Option<String>,
    },
    /// List projects with their conversations and memories.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Rename a project.
    Rename {
        /// Current name.
        name: String,
        /// New name.
        new_name: String,
    },
    /// Change a project's instructions or folders.
    Edit {
        /// The project's name.
        name: String,
        /// New standing instructions ("" for none).
        #[arg(long)]
        instructions: Option<String>,
        /// Its folders, replacing the old ones; repeat for more.
        #[arg(long = "folder", value_name = "DIR")]
        folders: Vec<PathBuf>,
        /// Remove every folder (its conversations use the settings' workspace roots).
        #[arg(long, conflicts_with = "folders")]
        no_folders: bool,
    },
    /// Remove a project. Its conversations stay, in no project; its memories become
    /// global or are deleted (`--memories`, needed when it has any).
    Remove {
        /// The project's name.
        name: String,
        /// global (they are recalled everywhere) or delete (for good).
        #[arg(long, value_parser = parse_memories)]
        memories: Option<ProjectMemories>,
    },
}

fn parse_memories(text: &str) -> Result<ProjectMemories, String> {
    ProjectMemories::parse(text)
        .ok_or_else(|| format!("expected one of {}", ProjectMemories::expected()))
}

/// A folder as the engine takes it: absolute (a relative one is taken from here).
fn absolute(folders: Vec<PathBuf>) -> anyhow::Result<Vec<String>> {
    folders
        .into_iter()
        .map(|f| Ok(std::path::absolute(&f)?.to_string_lossy().into_owned()))
        .collect()
}

/// Runs one projects command.
pub async fn run(api: &Api, command: ProjectsCommand) -> anyhow::Result<()> {
    use ProjectsCommand as C;
    match command {
        C::Add {
            name,
            folders,
            instructions,
        } => {
            let folders = Some(absolute(folders)?);
            let request = AddProject {
                name,
                instructions,
                folders,
            };
            print::call(api, request, false).await
        }
        C::List { json } => print::call(api, ListProjects {}, json).await,
        C::Rename { name, new_name } => {
            let request = EditProject {
                name,
                new_name: Some(new_name),
                instructions: None,
                folders: None,
            };
            print::call(api, request, false).await
        }
        C::Edit {
            name,
            instructions,
            folders,
            no_folders,
        } => {
            let folders = (no_folders || !folders.is_empty()).then_some(absolute(folders)?);
            let request = EditProject {
                name,
                new_name: None,
                instructions,
                folders,
            };
            print::call(api, request, false).await
        }
        C::Remove { name, memories } => {
            print::call(api, RemoveProject { name, memories }, false).await
        }
    }
}

impl Text for Project {
    fn text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(
            out,
            "{}  {} conversations, {} memories",
            self.name, self.sessions, self.memories
        )?;
        for folder in &self.folders {
            writeln!(out, "  folder: {folder}")?;
        }
        if let Some(instructions) = &self.instructions {
            writeln!(out, "  instructions: {}", print::clip(instructions, 100))?;
        }
        Ok(())
    }
}

impl Text for Vec<Project> {
    fn text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        if self.is_empty() {
            writeln!(out, "no projects yet (echod projects add NAME)")?;
        }
        self.iter().try_for_each(|p| p.text(out))
    }
}

impl Text for ProjectRemoved {
    fn text(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(
            out,
            "removed {:?}: {} memories moved to global, {} deleted",
            self.project.name, self.moved, self.deleted
        )
    }
}
