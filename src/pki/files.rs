//! The PKI's file handling: private directories, atomic writes with the
//! final mode, and the warnings about keys others can read.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::PkiError;

pub(super) fn exists(path: &Path) -> Result<bool, PkiError> {
    path.try_exists().map_err(|source| PkiError::Io {
        action: "checking",
        path: path.to_path_buf(),
        source,
    })
}

pub(super) fn read_string(path: &Path) -> Result<String, PkiError> {
    fs::read_to_string(path).map_err(|source| PkiError::Io {
        action: "reading",
        path: path.to_path_buf(),
        source,
    })
}

pub(super) fn create_private_dir(dir: &Path) -> Result<(), PkiError> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(|source| PkiError::Io {
        action: "creating",
        path: dir.to_path_buf(),
        source,
    })
}

/// Writes through a temporary file and a rename so a crash never leaves a
/// truncated key or certificate behind, and creates the file with its final
/// mode so a private key is never briefly world-readable.
pub(super) fn write_file_atomic(path: &Path, contents: &[u8], mode: u32) -> Result<(), PkiError> {
    let io_err = |action, path: &Path| {
        let path = path.to_path_buf();
        move |source| PkiError::Io {
            action,
            path,
            source,
        }
    };
    let mut tmp_name = path.as_os_str().to_owned();
    tmp_name.push(".tmp");
    let tmp = PathBuf::from(tmp_name);
    // A leftover from a crash may carry a looser mode; `mode` only applies on
    // creation.
    match fs::remove_file(&tmp) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => {
            return Err(io_err("removing", &tmp)(e));
        }
        _ => {}
    }
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, mode);
    #[cfg(not(unix))]
    let _ = mode;
    let mut file = options.open(&tmp).map_err(io_err("creating", &tmp))?;
    file.write_all(contents).map_err(io_err("writing", &tmp))?;
    file.sync_all().map_err(io_err("syncing", &tmp))?;
    drop(file);
    fs::rename(&tmp, path).map_err(io_err("renaming into", path))?;
    if let Some(parent) = path.parent() {
        // The rename is durable only once the directory entry is.
        #[cfg(unix)]
        fs::File::open(parent)
            .and_then(|dir| dir.sync_all())
            .map_err(io_err("syncing", parent))?;
        #[cfg(not(unix))]
        let _ = parent;
    }
    Ok(())
}

/// Keys supplied by an operator are used as they are; a loose mode is worth
/// a warning, not a silent chmod that could break whoever else reads them.
pub(super) fn warn_if_readable_by_others(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = fs::metadata(path) {
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                tracing::warn!(
                    path = %path.display(),
                    mode = format_args!("{mode:o}"),
                    "private key is accessible to group or others"
                );
            }
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}
