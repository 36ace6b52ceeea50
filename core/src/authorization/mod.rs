//! Authorization: may this user do this? `system:masters` may do anything;
//! everyone else as RBAC decides (rbac.rs), with the escalation checks on
//! writes of roles and bindings. Impersonation (`kubectl --as`) is
//! authorized here too, and the reviews (`kubectl auth can-i`, `whoami`,
//! TokenReview, SubjectAccessReview) answer from the same decisions.

pub mod impersonation;
pub mod rbac;
pub(crate) mod review;
