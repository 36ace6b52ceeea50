//! Built-in controllers that run inside the server process. Each one works
//! only through the core's API and storage compare-and-swap, so several
//! replicas can run them at once without contradicting each other.

pub mod clusterrole_aggregation;
pub mod garbage_collector;
pub mod namespace;
pub mod serviceaccounts;

/// Names accepted by `--controllers`.
pub const ALL_CONTROLLERS: &[&str] = &[
    "clusterrole-aggregation",
    "garbage-collector",
    "namespace",
    "serviceaccount",
];

/// Whether `name` is enabled by a kube-controller-manager style list
/// ("*" for all, "-name" to disable, "name" to enable).
pub fn enabled(list: &[String], name: &str) -> bool {
    let mut on = false;
    for item in list {
        match item.as_str() {
            "*" => on = true,
            other if other.strip_prefix('-') == Some(name) => return false,
            other if other == name => on = true,
            _ => {}
        }
    }
    on
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controller_lists() {
        let list = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(enabled(&list(&["*"]), "namespace"));
        assert!(!enabled(&list(&["*", "-namespace"]), "namespace"));
        assert!(enabled(&list(&["namespace"]), "namespace"));
        assert!(!enabled(&list(&[]), "namespace"));
    }
}
