//! `sylva completions SHELL` and `sylva man`: what the shell and `man` need, generated from
//! the command line's own definition so that they never fall behind it.

use clap::{Args, CommandFactory};

use crate::cli::Cli;
use crate::cli::console as out;

/// The flags of `sylva completions`.
#[derive(Args)]
pub(crate) struct CompletionsArgs {
    /// The shell.
    shell: clap_complete::Shell,
}

/// Prints the shell's completion script.
pub(crate) fn completions(args: &CompletionsArgs) {
    out::bytes(&script(args.shell));
}

/// The completion script for `shell`, generated whole first: clap_complete panics on a
/// failed write (a closed pipe).
fn script(shell: clap_complete::Shell) -> Vec<u8> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "sylva", &mut script);
    script
}

/// Prints the man page: the command's own page, then each subcommand's synopsis and options,
/// so that one page documents every flag.
pub(crate) fn man_page() -> Result<(), String> {
    out::bytes(&page().map_err(|e| format!("man page: {e}"))?);
    Ok(())
}

fn page() -> std::io::Result<Vec<u8>> {
    let mut cli = Cli::command();
    cli.build();
    let mut page = Vec::new();
    clap_mangen::Man::new(cli.clone()).render(&mut page)?;
    for sub in cli.get_subcommands().filter(|s| s.get_name() != "help") {
        let man = clap_mangen::Man::new(sub.clone());
        man.render_synopsis_section(&mut page)?;
        man.render_options_section(&mut page)?;
    }
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completions_know_every_command() {
        let bash = String::from_utf8(script(clap_complete::Shell::Bash)).unwrap();
        for command in ["run", "bench", "fly", "bake", "terrain", "completions"] {
            assert!(bash.contains(command), "{command}");
        }
    }

    #[test]
    fn the_man_page_documents_every_flag() {
        let page = String::from_utf8(page().unwrap()).unwrap();
        for flag in ["screenshot\\-every", "shard\\-from\\-env", "memory\\-limit", "warm"] {
            assert!(page.contains(flag), "{flag}");
        }
    }
}
