//! The batch API group's kinds, in upstream's discovery order.

mod cron_job;
pub(crate) mod job;

pub use cron_job::CronJob;
pub use job::Job;

use crate::registry::ResourceDef;

pub fn resources() -> Vec<ResourceDef> {
    [cron_job::resources(), job::resources()]
        .into_iter()
        .flatten()
        .collect()
}
