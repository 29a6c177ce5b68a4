//! The rules for values given on a command line (`--var KEY=VALUE`, `--var-file FILE`):
//! standard input read at most once, `model` / `provider` not set where the model called
//! must be the one the prompt names, and which names the flags pin.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use super::UsageError;
use super::values::{LoadedVarFile, STDIN_ARG, read_var_file};
use crate::prompt::{MODEL_VARIABLE, PROVIDER_VARIABLE};

/// Refuse `--var model=…` / `--var provider=…` (or those names in a `--var-file`, given
/// as `(file, name)` in `file_keys`) where the model actually called must be what the
/// prompt says (`run`): those come from `--model` / `--provider`.
pub fn refuse_model_vars(
    vars: &[(String, String)],
    file_keys: &[(String, String)],
) -> Result<(), UsageError> {
    for (key, _) in vars {
        if key == MODEL_VARIABLE || key == PROVIDER_VARIABLE {
            return Err(UsageError::with(
                format!(
                    "`--var {key}=…` would make the prompt name another model than the one called"
                ),
                Some(format!("use `--{key} …` instead")),
            ));
        }
    }
    for (file, key) in file_keys {
        if key == MODEL_VARIABLE || key == PROVIDER_VARIABLE {
            return Err(UsageError::with(
                format!(
                    "`{key}` in `--var-file {file}` would make the prompt name another model than the one called"
                ),
                Some(format!(
                    "use `--{key} …` instead, and remove `{key}` from the file"
                )),
            ));
        }
    }
    Ok(())
}

/// Does a `--var` or a `--var-file` (its names in `file_keys`) set `key`, so the caller
/// must not replace it?
pub fn pins(vars: &[(String, String)], file_keys: &[(String, String)], key: &str) -> bool {
    vars.iter().any(|(k, _)| k == key) || file_keys.iter().any(|(_, k)| k == key)
}

/// `(file, name)` of every name the var files that could be read set.
pub fn file_keys(loaded: &[LoadedVarFile]) -> Vec<(String, String)> {
    loaded
        .iter()
        .filter_map(|file| file.as_ref().ok())
        .flat_map(|file| {
            let shown = file.source.display.to_string();
            file.entries
                .iter()
                .map(move |e| (shown.clone(), e.name.clone()))
        })
        .collect()
}

/// Refuse a second reader of standard input: the preset `-` and `--var-file -`.
pub fn check_stdin(preset_arg: &str, var_files: &[PathBuf]) -> Result<(), UsageError> {
    if preset_arg == STDIN_ARG && var_files.iter().any(|p| p.as_os_str() == STDIN_ARG) {
        return Err(UsageError::with(
            "the preset `-` and `--var-file -` both read standard input, which can be read only once",
            Some(
                "give the values in a file (`--var-file values.yaml`), or the preset as a path"
                    .into(),
            ),
        ));
    }
    Ok(())
}

/// Every var file of `paths`, read and parsed the first time (kept in `loaded`:
/// standard input and pipes cannot be read twice). Standard input may be given once.
pub fn load_var_files<'a>(
    paths: &[PathBuf],
    loaded: &'a OnceLock<Arc<[LoadedVarFile]>>,
) -> Result<&'a [LoadedVarFile], UsageError> {
    if paths.iter().filter(|p| p.as_os_str() == STDIN_ARG).count() > 1 {
        return Err(UsageError::with(
            "`--var-file -` is given twice, but standard input can be read only once",
            Some("put all the values into one file on standard input".into()),
        ));
    }
    Ok(loaded.get_or_init(|| paths.iter().map(|p| read_var_file(p)).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(a: &str, b: &str) -> (String, String) {
        (a.to_owned(), b.to_owned())
    }

    #[test]
    fn model_and_provider_come_from_their_flags() {
        assert!(refuse_model_vars(&[pair("ticket", "1")], &[pair("v.yaml", "date")]).is_ok());
        let e = refuse_model_vars(&[pair("model", "x")], &[]).unwrap_err();
        assert!(e.message.starts_with("`--var model=…`"), "{e:?}");
        assert_eq!(e.help.as_deref(), Some("use `--model …` instead"));
        let e = refuse_model_vars(&[], &[pair("v.yaml", "provider")]).unwrap_err();
        assert!(
            e.message.starts_with("`provider` in `--var-file v.yaml`"),
            "{e:?}"
        );
    }

    #[test]
    fn standard_input_is_read_once() {
        let stdin = [PathBuf::from("-")];
        assert!(check_stdin("-", &stdin).is_err());
        assert!(check_stdin("p.yaml", &stdin).is_ok());
        assert!(check_stdin("-", &[PathBuf::from("v.yaml")]).is_ok());
        let twice = [PathBuf::from("-"), PathBuf::from("-")];
        let e = load_var_files(&twice, &OnceLock::new()).unwrap_err();
        assert!(e.message.contains("given twice"), "{e:?}");
        assert!(load_var_files(&[], &OnceLock::new()).unwrap().is_empty());
    }

    #[test]
    fn flags_and_files_pin_names() {
        let vars = [pair("date", "2030-01-01")];
        let files = [pair("v.yaml", "cwd")];
        assert!(pins(&vars, &files, "date"));
        assert!(pins(&vars, &files, "cwd"));
        assert!(!pins(&vars, &files, "model"));
    }
}
