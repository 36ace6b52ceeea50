#[allow(unused_imports)]
use super::*;
